/**
 * Scopes made outside any fiber, so that a request's fiber can start with
 * its whole context (its scope included) instead of setting it in a step:
 * a fiber's context given when it is forked costs nothing more, while one
 * set by a step copies all the fiber's refs (see docs/decisions.md, "A
 * request's context is made before its fiber").
 *
 * Effect makes a scope only in a step (`Scope.make`). Its scopes are plain
 * objects of one prototype with two fields (`strategy`, and `state`: open
 * with its finalizers, or closed with its exit), which its own code reads
 * directly (`Effect.forkIn`), so a scope made here is one of those: the
 * prototype is taken from a scope `Scope.make` made, and the fields are
 * checked to be the ones this module knows. Where they are not (another
 * version of Effect), there is no maker and the server makes each scope in
 * a step as before; `test/Scopes.test.ts` fails then, so that it is seen.
 */
import { Effect, Exit, Scope } from "effect"

/** Makes an open scope with sequential finalization, as `Scope.make()` does; undefined where this Effect's scopes are not what this module knows. */
export type MakeScope = () => Scope.CloseableScope

interface Known {
  readonly strategy: unknown
  readonly state: { readonly _tag: string; readonly finalizers?: unknown }
}

const isKnown = (scope: unknown): scope is Known => {
  const fields = Object.keys(scope as object)
  const state = (scope as Partial<Known>).state
  return fields.length === 2 && fields[0] === "strategy" && fields[1] === "state" &&
    state !== undefined && state._tag === "Open" && state.finalizers instanceof Map && state.finalizers.size === 0 &&
    typeof (scope as { close?: unknown }).close === "function"
}

/** The maker of scopes outside a fiber, built from one scope `Scope.make` made (and closed again). */
export const maker: Effect.Effect<MakeScope | undefined> = Effect.flatMap(Scope.make(), (reference) => {
  const known = isKnown(reference)
  const prototype = Object.getPrototypeOf(reference) as object
  const strategy = known ? reference.strategy : undefined
  // The fields in the order `Scope.make` sets them, so that every scope has the same shape.
  const make: MakeScope | undefined = known
    ? () => Object.assign(Object.create(prototype), { strategy, state: { _tag: "Open", finalizers: new Map() } })
    : undefined
  return Effect.as(Scope.close(reference, Exit.void), make)
})

/** A finalizer's effect that `Effect.sync` made: its function is what running it does. */
interface SyncEffect {
  readonly _op: "Sync"
  readonly effect_instruction_i0: () => unknown
}

/** Whether this Effect's `Effect.sync` makes effects this module can run by calling their function. */
const syncKnown = (() => {
  const probe = () => undefined
  const made = Effect.sync(probe) as unknown as Partial<SyncEffect>
  return made._op === "Sync" && made.effect_instruction_i0 === probe
})()

const isSync = (effect: unknown): effect is SyncEffect =>
  (effect as Partial<SyncEffect>)._op === "Sync" && typeof (effect as Partial<SyncEffect>).effect_instruction_i0 === "function"

/**
 * Closes a scope on the calling stack, without a fiber, when every
 * finalizer it holds is an `Effect.sync` (as the finalizers of a pushed
 * stream are: a subscription and a heartbeat taken off their registers):
 * marked closed with `exit`, then each finalizer run in reverse order of
 * adding, as `Scope.close` runs a sequential scope's. A finalizer that
 * throws does not stop the others; its defect would end the closing fiber,
 * which nothing reads. Returns false, having done nothing, where a
 * finalizer is anything else (or the scope is not one this module knows):
 * the caller then closes it with `Scope.close` in a fiber. A scope already
 * closed is left as it is.
 */
export const closeNow = (scope: Scope.CloseableScope, exit: Exit.Exit<unknown, unknown>): boolean => {
  if (!syncKnown) return false
  const state = (scope as unknown as Partial<Known>).state
  if (state === undefined) return false
  if (state._tag === "Closed") return true
  if (state._tag !== "Open" || !(state.finalizers instanceof Map)) return false
  const finalizers = Array.from((state.finalizers as Map<unknown, (exit: Exit.Exit<unknown, unknown>) => unknown>).values())
  const effects: Array<SyncEffect> = []
  for (let index = finalizers.length - 1; index >= 0; index--) {
    const effect = finalizers[index]!(exit)
    if (!isSync(effect)) return false
    effects.push(effect)
  }
  ;(scope as unknown as { state: unknown }).state = { _tag: "Closed", exit }
  for (const effect of effects) {
    try {
      effect.effect_instruction_i0()
    } catch {
      // Effect's close would carry it as the closing fiber's defect, which nothing reads.
    }
  }
  return true
}
