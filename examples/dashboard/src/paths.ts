/**
 * The dashboard's addresses: matching a path against a route pattern, and
 * building a path from its segments.
 */

/**
 * Matches a path against a pattern of literal segments and `:name`
 * parameters; answers the decoded parameters, or `undefined`.
 */
export const match = (pattern: string, path: string): Record<string, string> | undefined => {
  const want = pattern.split("/").filter(Boolean)
  const have = path.split("/").filter(Boolean)
  if (want.length !== have.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!
    let value: string
    try {
      value = decodeURIComponent(have[i]!)
    } catch {
      return undefined
    }
    if (segment.startsWith(":")) params[segment.slice(1)] = value
    else if (segment !== value) return undefined
  }
  return params
}

/** Builds a path from segments, encoding each one. */
export const pathOf = (...segments: ReadonlyArray<string>) => `/${segments.map(encodeURIComponent).join("/")}`
