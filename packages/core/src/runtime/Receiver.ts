/**
 * How a service pushes a live stream to whoever serves it (an HTTP
 * response, say) without a fiber per stream: it calls the receiver with
 * each batch, in order, and the receiver answers whether it can take more.
 */
import { Chunk, type Effect, type Scope, Stream } from "effect"

/** Takes the items of one stream. */
export interface Receiver<A> {
  /**
   * The next items, in order. `false` asks for a pause: nothing more is
   * pushed until the receiver calls its subscription's `resume`, and then
   * what it missed is pushed. The same array may be given to several
   * receivers (keep what is derived from it by identity).
   */
  readonly push: (items: ReadonlyArray<A>) => boolean
  /** The stream ended (the service is stopping): nothing more comes. */
  readonly end: () => void
}

/** A receiver's registration. */
export interface Subscription {
  /** The receiver can take items again after it asked for a pause; harmless otherwise. */
  readonly resume: () => void
}

/**
 * A followed stream as a `Stream`: `follow` registers the receiver for the
 * life of the stream's scope. The `Stream` takes every item (it buffers
 * rather than asking for a pause).
 */
export const toStream = <A, E, R>(
  follow: (receiver: Receiver<A>) => Effect.Effect<Subscription, E, R>
): Stream.Stream<A, E, Exclude<R, Scope.Scope>> =>
  Stream.asyncScoped<A, E, R>((emit) =>
    follow({
      push: (items) => {
        void emit.chunk(Chunk.unsafeFromArray(items))
        return true
      },
      end: () => void emit.end()
    })
  )
