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
import { Context, Effect, type Fiber, FiberRef, Option, Tracer } from "effect"
import type { YieldWrap } from "effect/Utils"

/** Whether `fiber`'s tracer is enabled. */
const tracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => fiber.getFiberRef(FiberRef.currentTracerEnabled)

/** Runs `traced` when the running fiber's tracer is enabled, else `plain`. */
const whenTraced = <A, E, R>(traced: () => Effect.Effect<A, E, R>, plain: () => Effect.Effect<A, E, R>) =>
  Effect.withFiberRuntime<A, E, R>((fiber) => tracing(fiber) ? traced() : plain())

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

/** `withSpan` for a caller that already looks at its fiber (`Effect.withFiberRuntime`): decided at no step of its own. */
export const withSpanIn = <A, E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  effect: Effect.Effect<A, E, R>,
  name: string,
  options?: Tracer.SpanOptions
): Effect.Effect<A, E, R> => tracing(fiber) ? Effect.withSpan(effect, name, options) as Effect.Effect<A, E, R> : effect

/**
 * The span the running fiber is in, while a tracer is enabled: with the
 * tracer off, a span in context (a no-op one) is nothing to pass on.
 */
export const currentSpan: Effect.Effect<Option.Option<Tracer.AnySpan>> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Context.getOption(fiber.currentContext, Tracer.ParentSpan) : Option.none()
  )
)

const w3cTraceId = /^(?!0{32})[0-9a-f]{32}$/
const w3cSpanId = /^(?!0{16})[0-9a-f]{16}$/

/** The trace id of the current span when it is a W3C one (32 hex digits), while a tracer is enabled. */
export const currentTraceId: Effect.Effect<Option.Option<string>> = Effect.map(
  currentSpan,
  Option.flatMap((span) => (w3cTraceId.test(span.traceId) ? Option.some(span.traceId) : Option.none()))
)

/** The W3C `traceparent` header that makes a callee's spans children of `span`; undefined when its ids are not W3C ones. */
export const traceparentOf = (span: Tracer.AnySpan): string | undefined =>
  w3cTraceId.test(span.traceId) && w3cSpanId.test(span.spanId)
    ? `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
    : undefined
