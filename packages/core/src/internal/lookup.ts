import { Effect, Option } from "effect"

/** Turns an absent result of a lookup into the domain's error. */
export const orFail = <E>(onNone: () => E) => <A, E2, R>(self: Effect.Effect<Option.Option<A>, E2, R>) =>
  Effect.flatMap(self, Option.match({ onNone: () => Effect.fail(onNone()), onSome: (a: A) => Effect.succeed(a) }))
