/**
 * Client-side routing on history-API paths (`/agents/acme/helper`): the
 * server answers `index.html` for every path outside `/api/v1` that is not a
 * file, and this module picks the page.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"

export { match, pathOf } from "./paths"

const changed = "dashboard:navigate"

/** Goes to a path of the dashboard without reloading the page. */
export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  if (options.replace) window.history.replaceState(null, "", to)
  else window.history.pushState(null, "", to)
  window.dispatchEvent(new Event(changed))
}

/** Where the page is: the path and the query of the address. */
export interface Location {
  readonly path: string
  readonly query: URLSearchParams
}

const read = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) })

/** The current location; the component re-renders when it changes. */
export const useLocation = (): Location => {
  const [location, setLocation] = useState(read)
  useEffect(() => {
    const update = () => setLocation(read())
    window.addEventListener("popstate", update)
    window.addEventListener(changed, update)
    return () => {
      window.removeEventListener("popstate", update)
      window.removeEventListener(changed, update)
    }
  }, [])
  return location
}

interface LinkProps {
  readonly href: string
  readonly class?: string | undefined
  readonly "aria-current"?: "page" | "true" | undefined
  readonly onClick?: ((event: MouseEvent) => void) | undefined
  readonly children?: ComponentChildren
}

/** A link inside the dashboard: a real `<a href>`, followed without a reload unless a modifier key asks otherwise. */
export const Link = ({ href, onClick, children, class: className, "aria-current": current }: LinkProps) => (
  <a
    href={href}
    class={className}
    aria-current={current}
    onClick={(event) => {
      onClick?.(event)
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
        return
      }
      event.preventDefault()
      navigate(href)
    }}
  >
    {children}
  </a>
)
