/**
 * The completion scripts @effect/cli generates (`hosting --completions
 * bash|zsh|fish`), repaired: bash reaches the leaves, knows the global
 * options there and offers an option's choices one by one; no shell offers
 * the hidden `--wizard`.
 */

const globals = ["--json", "--profile", "--base-url", "--token"]

/**
 * The bash script names a nested command `hosting__agents__list` but matches
 * `hosting,agents,list)` against `${cmd},${word}`, which is
 * `hosting__agents,list`: its case labels are rewritten to match.
 */
const bash = (script: string): string =>
  script
    .replace(/^(\s+)(hosting(?:,[\w-]+)+)\)$/gm, (_, indent: string, label: string) => {
      const words = label.split(",")
      return `${indent}${words.slice(0, -1).join("__")},${words[words.length - 1]})`
    })
    // Choices are given to compgen -W joined by commas, which it takes for one word.
    .replace(/compgen -W "([\w-]+(?:,[\w-]+)+)"/g, (_, choices: string) => `compgen -W "${choices.split(",").join(" ")}"`)
    .replace(/^(\s+opts=")(.*)"$/gm, (_, start: string, opts: string) => {
      const words = opts.split(" ").filter((w) => w !== "--wizard")
      return `${start}${[...words, ...globals.filter((g) => !words.includes(g))].join(" ")}"`
    })

/** Repairs a completion script; any other text is left as it is. */
export const repair = (text: string): string => {
  if (text.startsWith("function _hosting_bash_completions")) return bash(text)
  if (text.startsWith("#compdef hosting")) return text.replace(/^\s+'--wizard\[[^\n]*\n/gm, "")
  if (/^complete -c hosting /m.test(text)) return text.replace(/^complete -c hosting [^\n]* -l wizard [^\n]*\n/gm, "")
  return text
}
