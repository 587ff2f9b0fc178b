/**
 * Paths with `.` or `..` segments. A URL parser removes them (with the
 * segment before a `..`), so a request for `/api/v1/x/../../etc/passwd`
 * would be routed, or served a page, as if it had asked for `/etc/passwd`.
 * No route and no page of ours has such a segment: a request whose path has
 * one is refused before routing, whatever it would have resolved to.
 */

/** `.` and `..` as the URL standard counts them: dots, each possibly written `%2e`, and nothing else. */
const dotSegment = /^(?:\.|%2e){1,2}$/i

/**
 * True when the path of a request target (`/a/../b?q`) has a `.` or `..`
 * segment, raw or percent-encoded; a backslash separates segments too, as it
 * does for a URL parser on http(s) URLs.
 */
export const hasDotSegment = (target: string): boolean => {
  const query = target.search(/[?#]/)
  const path = query === -1 ? target : target.slice(0, query)
  if (!path.includes(".") && !/%2e/i.test(path)) return false
  return path.split(/[/\\]/).some((segment) => dotSegment.test(segment))
}

/** The sentence of the 400 such a request gets. */
export const details = "The path has a '.' or '..' segment, which no route or page of this server has."
