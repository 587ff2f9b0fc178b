/**
 * Text that can be stored: any string without U+0000 (NUL). PostgreSQL's
 * `text` cannot hold a NUL and SQLite can, so that a server answers the same
 * on every storage, no stored text ever holds one: a request carrying a NUL in
 * any text is refused (400 `invalid_request`) by its schema, and text from an
 * agent has each NUL replaced by U+FFFD (docs/decisions.md, "No NUL in text").
 */
import { Schema } from "effect"

const nul = "\u0000"

/** Whether a string holds a NUL. */
export const hasNul = (text: string): boolean => text.includes(nul)

/** The string with each NUL replaced by U+FFFD, the replacement character. */
export const withoutNul = (text: string): string => hasNul(text) ? text.replaceAll(nul, "\uFFFD") : text

/** A string without NUL: every text field of a request is one. */
export const Text = Schema.String.pipe(
  Schema.filter((text) => !hasNul(text), {
    message: () => "must not contain the NUL character (U+0000)",
    jsonSchema: { pattern: "^[^\\u0000]*$" }
  })
)
