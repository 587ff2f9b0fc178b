/**
 * A readme rendered as Markdown, safely: raw HTML in the text is shown as
 * text (`html: false`), links may only use http(s), mailto or relative
 * addresses, and they open without handing the dashboard to the target.
 */
import MarkdownIt from "markdown-it"
import { useMemo } from "preact/hooks"

const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false })

const safeLink = /^(https?:|mailto:|#|\/(?!\/)|\.{0,2}\/|[^:]*$)/i
markdown.validateLink = (url) => safeLink.test(url.trim())

const renderToken = markdown.renderer.renderToken.bind(markdown.renderer)
markdown.renderer.rules["link_open"] = (tokens, index, options) => {
  const token = tokens[index]!
  token.attrSet("rel", "noopener noreferrer nofollow")
  if (/^https?:/i.test(String(token.attrGet("href") ?? ""))) token.attrSet("target", "_blank")
  return renderToken(tokens, index, options)
}

// A readme's headings sit under the page's own (h1 page, h2 section, h3 build): `#` becomes h4.
markdown.renderer.rules["heading_open"] = (tokens, index, options) => {
  const token = tokens[index]!
  token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 3)}`
  return renderToken(tokens, index, options)
}
markdown.renderer.rules["heading_close"] = (tokens, index, options) => {
  const token = tokens[index]!
  token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 3)}`
  return renderToken(tokens, index, options)
}

/** Markdown text as HTML; empty text shows a note instead. */
export const Markdown = ({ text }: { readonly text: string }) => {
  const html = useMemo(() => markdown.render(text), [text])
  if (text.trim() === "") return <p class="muted">No readme.</p>
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />
}
