/**
 * Schema failures as short sentences for people: one `path: message` per
 * problem, without the schema's type dump.
 */
import { ParseResult } from "effect"

/** One problem found while decoding. */
export interface Issue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * The schema's message without the `, actual <value>` it ends with: the value
 * sent may be a credential (an overlong token, a code in the wrong field),
 * and an error answer must never echo one.
 */
const withoutActual = (message: string) => message.replace(/, actual .*$/, "")

/** `path: message` lines joined with "; " (duplicates dropped). */
export const formatIssues = (issues: ReadonlyArray<Issue>, root = "request"): string => {
  const lines = issues.map((issue) => {
    const where = issue.path.length === 0 ? root : issue.path.map(String).join(".")
    const message = issue._tag === "Missing" ? "is required" : withoutActual(issue.message.split("\n")[0]!)
    return `${where}: ${message}`
  })
  return [...new Set(lines)].join("; ")
}

/** A ParseError as `path: message` lines. */
export const formatParseError = (error: ParseResult.ParseError, root?: string): string =>
  formatIssues(ParseResult.ArrayFormatter.formatErrorSync(error), root)
