import { Context, Effect } from "effect"
import type { StorageError } from "../model/Errors.js"

/** Runs an effect as one storage transaction: all of its writes land, or none do. */
export class Transactor extends Context.Tag("@hosting/core/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}>() {}
