/**
 * How a service pushes a live stream to whoever serves it (an HTTP
 * response, say) without a fiber per stream: it calls the receiver with
 * each batch, in order, and the receiver answers whether it can take more.
 */

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
