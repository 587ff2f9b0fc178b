/**
 * The A2A SDK, loaded at the first A2A request: a server never asked over
 * A2A does not hold its modules in memory.
 */
import { Effect } from "effect"

/** The SDK's types and server modules, as one. */
export type Sdk = typeof import("@a2a-js/sdk") & typeof import("@a2a-js/sdk/server")

let loading: Promise<Sdk> | undefined

/** The SDK, imported once, when first needed. */
export const load: Effect.Effect<Sdk> = Effect.promise(() =>
  loading ??= Promise.all([import("@a2a-js/sdk"), import("@a2a-js/sdk/server")]).then(([types, server]) => ({ ...types, ...server }))
)
