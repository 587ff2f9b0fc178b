import { v7 as uuidV7 } from "uuid"
import { Context, Effect, Layer } from "effect"

/** Fresh identifiers. */
export class IdGenerator extends Context.Tag("@hosting/core/IdGenerator")<IdGenerator, {
  readonly next: Effect.Effect<string>
}>() {}

/** Random UUID v4 identifiers (Web Crypto). */
export const IdGeneratorRandom: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, {
  next: Effect.sync(() => globalThis.crypto.randomUUID())
})

/**
 * UUID v7 identifiers (RFC 9562): a millisecond timestamp first, then random
 * bits, increasing within one process. Stored as keys, new ids land at the
 * end of an index instead of on a random page of it, so a write dirties
 * fewer pages; the servers use these. They tell when they were made, to the
 * millisecond.
 */
export const IdGeneratorTimeOrdered: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, {
  next: Effect.sync(() => uuidV7())
})
