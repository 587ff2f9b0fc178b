/**
 * Bounded gzip decompression of a request body with the web-standard
 * `DecompressionStream`, so that it works on any server the API is served
 * on. A body that inflates past its limit (a gzip bomb) is stopped at the
 * limit: at most `limit` bytes, plus one chunk of the stream, are ever held.
 */
import { Effect } from "effect"

/** Why a body could not be inflated. */
export type GunzipFailure =
  | { readonly _tag: "TooLarge"; readonly limit: number }
  | { readonly _tag: "Corrupt"; readonly reason: string }

const inflate = async (bytes: Uint8Array, limit: number, signal: AbortSignal): Promise<Uint8Array | GunzipFailure> => {
  const input = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
  const reader = input.pipeThrough(new DecompressionStream("gzip")).getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    for (;;) {
      if (signal.aborted) return { _tag: "Corrupt", reason: "interrupted" }
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) return { _tag: "TooLarge", limit }
      chunks.push(value)
    }
  } catch (error) {
    return { _tag: "Corrupt", reason: error instanceof Error ? error.message : String(error) }
  } finally {
    // Stops the inflation where it is (a no-op once the stream ended).
    reader.cancel().catch(() => undefined)
  }
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

/** The inflated bytes of a gzip body (members one after another included), or why not: past `limit` bytes, or not gzip. */
export const gunzip = (bytes: Uint8Array, limit: number): Effect.Effect<Uint8Array, GunzipFailure> =>
  Effect.flatMap(
    Effect.promise((signal) => inflate(bytes, limit, signal)),
    (result) => result instanceof Uint8Array ? Effect.succeed(result) : Effect.fail(result)
  )
