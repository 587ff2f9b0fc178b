/**
 * Spans that cost nothing while no tracer is enabled.
 *
 * With the tracer disabled (`Layer.setTracerEnabled(false)`, as the example
 * server runs), Effect still makes a no-op span for every `Effect.fn(name)`
 * call and `Effect.withSpan`, captures a stack trace for it and copies the
 * fiber's whole context to hold it as the parent span: about 20 µs a call on
 * the bench machines, most of a cheap use case. These helpers look at the
 * fiber's tracer switch when they run and skip the span when it is off; with
 * a tracer on, the spans are the same as Effect's.
 */
import { Effect, FiberRef, type Tracer } from "effect"
import type { YieldWrap } from "effect/Utils"

/** Runs `traced` when the running fiber's tracer is enabled, else `plain`. */
const whenTraced = <A, E, R>(traced: () => Effect.Effect<A, E, R>, plain: () => Effect.Effect<A, E, R>) =>
  Effect.withFiberRuntime<A, E, R>((fiber) => fiber.getFiberRef(FiberRef.currentTracerEnabled) ? traced() : plain())

/**
 * `Effect.fn(name)(body)`, with the span made only while a tracer is
 * enabled. The span is made when the returned effect runs, not when the
 * function is called, so the call site it records for a failure
 * (`code.stacktrace`) is in Effect's runtime rather than in the caller:
 * capturing the caller's would cost the stack trace on every call again.
 */
export const fn = (name: string) =>
<Eff extends YieldWrap<Effect.Effect<any, any, any>>, A, Args extends Array<any>>(
  body: (...args: Args) => Generator<Eff, A, never>
) => {
  const plain = Effect.fnUntraced(body)
  const traced = Effect.fn(name)(body) as unknown as typeof plain
  return (...args: Args): ReturnType<typeof plain> =>
    whenTraced(() => traced(...args), () => plain(...args)) as ReturnType<typeof plain>
}

/** `Effect.withSpan(name, options)`, skipped while no tracer is enabled. */
export const withSpan = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  whenTraced(() => Effect.withSpan(effect, name, options) as Effect.Effect<A, E, R>, () => effect)
