import { describe, expect, it } from "@effect/vitest"
import { Tracing } from "@hosting/core"
import { Effect, Layer, Option, Tracer } from "effect"

/** A tracer that keeps the name and parent of every span it is asked for. */
const recording = () => {
  const spans: Array<{ readonly name: string; readonly parent: string | undefined }> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      spans.push({ name, parent: Option.match(parent, { onNone: () => undefined, onSome: (p) => p.spanId }) })
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: name,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: () => {},
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, layer: Layer.setTracer(tracer) }
}

/** The span the store's code runs in, if any. */
let innermost: Option.Option<Tracer.AnySpan> = Option.none()
const lookup = Tracing.withSpan("Store.lookup")(Effect.flatMap(Effect.serviceOption(Tracer.ParentSpan), (span) => {
  innermost = span
  return Effect.succeed(2)
}))
const useCase = Tracing.fn("UseCase.run")(function*(n: number) {
  const found = yield* lookup
  if (n < 0) return yield* Effect.fail(`negative: ${n}`)
  return n * found
})

describe("Tracing", () => {
  it.effect("with a tracer enabled, makes Effect's spans: the use case's, and the store's inside it", () => {
    const { layer, spans } = recording()
    return Effect.gen(function*() {
      expect(yield* useCase(21)).toBe(42)
      expect(spans).toEqual([{ name: "UseCase.run", parent: undefined }, { name: "Store.lookup", parent: "UseCase.run" }])
      expect(Option.map(innermost, (span) => span.spanId)).toEqual(Option.some("Store.lookup"))
    }).pipe(Effect.provide(layer))
  })

  // Effect's own spans would be no-op spans here, each copying the fiber's context to be the parent of what runs inside.
  it.effect("with the tracer disabled, makes no span, not even a no-op parent, and gives the same results and failures", () => {
    const { layer, spans } = recording()
    return Effect.gen(function*() {
      expect(yield* useCase(21)).toBe(42)
      expect(Option.isNone(innermost)).toBe(true)
      expect(yield* Effect.flip(useCase(-1))).toBe("negative: -1")
      expect(spans).toEqual([])
    }).pipe(Effect.provide(Layer.merge(layer, Layer.setTracerEnabled(false))))
  })

  it.effect("withSpanIn, for a caller that holds its fiber, makes the span while the tracer is enabled and none while it is off", () => {
    const { layer, spans } = recording()
    const inSpan = Effect.withFiberRuntime<Option.Option<Tracer.AnySpan>>((fiber) =>
      Tracing.withSpanIn(fiber, Effect.serviceOption(Tracer.ParentSpan), "Store.method")
    )
    return Effect.gen(function*() {
      expect(Option.map(yield* inSpan, (span) => span.spanId)).toEqual(Option.some("Store.method"))
      expect(Option.isNone(yield* inSpan.pipe(Effect.provide(Layer.setTracerEnabled(false))))).toBe(true)
      expect(spans).toEqual([{ name: "Store.method", parent: undefined }])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the current trace id and traceparent are a span's W3C ids while a tracer is enabled; none while it is off", () =>
    Effect.gen(function*() {
      const parent = Tracer.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" })
      const inside = <A>(effect: Effect.Effect<A>) => Effect.withSpan(effect, "turn", { parent })
      expect(yield* inside(Tracing.currentTraceId)).toEqual(Option.some("4bf92f3577b34da6a3ce929d0e0e4736"))
      const span = Option.getOrThrow(yield* inside(Tracing.currentSpan))
      expect(Tracing.traceparentOf(span)).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${span.spanId}-01`)
      expect(yield* Tracing.currentTraceId).toEqual(Option.none())
      expect(yield* inside(Tracing.currentTraceId).pipe(Effect.withTracerEnabled(false))).toEqual(Option.none())
      // Ids that are not W3C ones (a tracer of its own making) are not passed on.
      expect(Tracing.traceparentOf(Tracer.externalSpan({ traceId: "trace", spanId: "span" }))).toBeUndefined()
    }))
})
