import { type Chunk, Effect, Option, Stream } from "effect"

/**
 * Runs `each` on every chunk of a stream, in order, pulling the chunks
 * itself: half the work of `Stream.runForEachChunk`, which is most of the
 * cost of a short reply. Interrupting it closes the stream.
 */
export const forEachChunk = <A, E, R, E2>(
  stream: Stream.Stream<A, E, R>,
  each: (chunk: Chunk.Chunk<A>) => Effect.Effect<void, E2>
): Effect.Effect<void, E | E2, R> =>
  Effect.scoped(Effect.flatMap(Stream.toPull(stream), (pull) => {
    // The pull fails with None at the end of the stream, with Some at its failure.
    const next: Effect.Effect<void, E | E2, R> = Effect.matchEffect(pull, {
      onFailure: Option.match({ onNone: () => Effect.void, onSome: Effect.fail }),
      onSuccess: (chunk) => Effect.zipRight(each(chunk), next)
    })
    return next
  }))
