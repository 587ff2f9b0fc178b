/**
 * A reply's text as its deltas arrive. Each delta carries its `index` in the
 * whole text, so a delta repeated after a reconnection, or one that overlaps
 * what is already shown, never doubles the text.
 */

/** The text after placing `delta` at `index`: repeats are dropped, overlaps trimmed. */
export const placeDelta = (content: string, index: number, delta: string): string => {
  if (index + delta.length <= content.length) return content
  if (index <= content.length) return content.slice(0, index) + delta
  // A gap (a delta the stream never sent): keep what came rather than lose it.
  return content + delta
}
