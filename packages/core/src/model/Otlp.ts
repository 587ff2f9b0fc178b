/**
 * OpenTelemetry OTLP/HTTP JSON trace export requests (the
 * `ExportTraceServiceRequest` of opentelemetry-proto in its JSON mapping),
 * and how their spans become traces: each root span of a trace is one Trace.
 * Only the fields we read are described; unknown fields are ignored, as the
 * OTLP specification asks of receivers. No text may hold a NUL (Text.ts).
 */
import { Array as Arr, Option, Order, Schema } from "effect"
import * as GenAi from "./GenAi.js"
import { Text } from "./Text.js"
import {
  latencyMs,
  maxAttributeLength,
  maxAttributes,
  maxEvents,
  type SpanKind,
  type SpanStatus,
  timeOfNanos,
  type TraceStatus,
  truncate
} from "./Trace.js"

/** An attribute value: one of the `AnyValue` cases. */
export interface AnyValue {
  readonly stringValue?: string | undefined
  readonly boolValue?: boolean | undefined
  readonly intValue?: string | number | undefined
  readonly doubleValue?: string | number | undefined
  readonly bytesValue?: string | undefined
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValue> | undefined } | undefined
  readonly kvlistValue?: { readonly values?: ReadonlyArray<KeyValue> | undefined } | undefined
}

/** A named attribute. */
export interface KeyValue {
  readonly key: string
  readonly value?: AnyValue | undefined
}

const KeyValueSchema: Schema.Schema<KeyValue> = Schema.suspend(() =>
  Schema.Struct({ key: Text, value: Schema.optional(AnyValueSchema) })
).annotations({ identifier: "OtlpKeyValue" })

const AnyValueSchema: Schema.Schema<AnyValue> = Schema.suspend(() =>
  Schema.Struct({
    stringValue: Schema.optional(Text),
    boolValue: Schema.optional(Schema.Boolean),
    intValue: Schema.optional(Schema.Union(Text, Schema.Number)),
    doubleValue: Schema.optional(Schema.Union(Schema.Number, Text)),
    bytesValue: Schema.optional(Text),
    arrayValue: Schema.optional(Schema.Struct({ values: Schema.optional(Schema.Array(AnyValueSchema)) })),
    kvlistValue: Schema.optional(Schema.Struct({ values: Schema.optional(Schema.Array(KeyValueSchema)) }))
  })
).annotations({ identifier: "OtlpAnyValue" })

/** Nanoseconds since the Unix epoch: a decimal string (the JSON mapping of uint64) or a number. */
const UnixNano = Schema.Union(
  Schema.String.pipe(Schema.pattern(/^\d{1,20}$/, { message: () => "must be nanoseconds since the Unix epoch" })),
  Schema.NonNegativeInt
)

const hex = (digits: number, what: string) =>
  Schema.String.pipe(Schema.pattern(new RegExp(`^[0-9a-fA-F]{${digits}}$`), {
    message: () => `must be a ${what} of ${digits} hexadecimal digits`
  }))

/** Status codes by number and by enum name (UNSET 0, OK 1, ERROR 2). */
const StatusCode = Schema.Union(
  Schema.Literal(0, 1, 2),
  Schema.Literal("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")
)

/** Span kinds by number and by enum name (UNSPECIFIED 0, INTERNAL 1, SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5). */
const kindNames = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const
const SpanKindCode = Schema.Union(
  Schema.Literal(0, 1, 2, 3, 4, 5),
  Schema.Literal(...kindNames.map((k) => `SPAN_KIND_${k.toUpperCase()}` as const))
)

const SpanEvent = Schema.Struct({
  timeUnixNano: Schema.optional(UnixNano),
  name: Schema.optional(Text),
  attributes: Schema.optional(Schema.Array(KeyValueSchema))
}).annotations({ identifier: "OtlpSpanEvent" })

export const Span = Schema.Struct({
  traceId: hex(32, "trace id"),
  spanId: hex(16, "span id"),
  parentSpanId: Schema.optional(Schema.Union(Schema.Literal(""), hex(16, "span id"))),
  name: Schema.optional(Text),
  kind: Schema.optional(SpanKindCode),
  startTimeUnixNano: UnixNano,
  endTimeUnixNano: UnixNano,
  attributes: Schema.optional(Schema.Array(KeyValueSchema)),
  events: Schema.optional(Schema.Array(SpanEvent)),
  status: Schema.optional(Schema.Struct({ code: Schema.optional(StatusCode), message: Schema.optional(Text) }))
}).annotations({ identifier: "OtlpSpan" })
export type Span = typeof Span.Type

export const ResourceSpans = Schema.Struct({
  resource: Schema.optional(Schema.Struct({ attributes: Schema.optional(Schema.Array(KeyValueSchema)) })),
  scopeSpans: Schema.optional(Schema.Array(Schema.Struct({ spans: Schema.optional(Schema.Array(Span)) })))
}).annotations({ identifier: "OtlpResourceSpans" })
export type ResourceSpans = typeof ResourceSpans.Type

/** The body of `POST /otlp/v1/traces`. */
export const ExportTraceServiceRequest = Schema.Struct({
  resourceSpans: Schema.optional(Schema.Array(ResourceSpans))
}).annotations({
  identifier: "ExportTraceServiceRequest",
  description: "OTLP/HTTP JSON trace export (opentelemetry-proto ExportTraceServiceRequest)"
})
export type ExportTraceServiceRequest = typeof ExportTraceServiceRequest.Type

/** The answer of an export: `partialSuccess` only when some spans were refused. */
export const ExportTraceServiceResponse = Schema.Struct({
  partialSuccess: Schema.optional(Schema.Struct({ rejectedSpans: Schema.String, errorMessage: Schema.String }))
}).annotations({ identifier: "ExportTraceServiceResponse" })
export type ExportTraceServiceResponse = typeof ExportTraceServiceResponse.Type

/** An attribute value as text: strings as they are, anything else as JSON. */
export const valueText = (value: AnyValue | undefined): string => {
  if (value === undefined) return ""
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return String(value.boolValue)
  if (value.intValue !== undefined) return String(value.intValue)
  if (value.doubleValue !== undefined) return String(value.doubleValue)
  if (value.bytesValue !== undefined) return value.bytesValue
  if (value.arrayValue !== undefined) return JSON.stringify((value.arrayValue.values ?? []).map(valueText))
  if (value.kvlistValue !== undefined) {
    return JSON.stringify(Object.fromEntries((value.kvlistValue.values ?? []).map((kv) => [kv.key, valueText(kv.value)])))
  }
  return ""
}

/** The text of the first attribute present among `keys`. */
export const attribute = (attributes: ReadonlyArray<KeyValue> | undefined, ...keys: ReadonlyArray<string>): Option.Option<string> =>
  Arr.findFirst(keys, (key) =>
    Option.map(Option.fromNullable(attributes?.find((kv) => kv.key === key)), (kv) => valueText(kv.value)))

/** Attribute keys of a span's input and output: OpenInference first, then the GenAI conventions (GenAi.ts). */
export const inputKeys = GenAi.keys.input
export const outputKeys = GenAi.keys.output

/** A trace read from spans, before it is tied to an agent. */
export interface SpanTrace {
  readonly trace_id: string
  readonly name: string
  readonly status: TraceStatus
  readonly latency_ms: number
  readonly input: string
  readonly output: string
  readonly timestamp: ReturnType<typeof timeOfNanos>
}

const isRoot = (span: Span) => span.parentSpanId === undefined || span.parentSpanId === ""
const startOf = (span: Span) => BigInt(span.startTimeUnixNano)
const byStart = Order.mapInput(Order.bigint, startOf)

const statusOf = (span: Span): TraceStatus =>
  span.status?.code === 2 || span.status?.code === "STATUS_CODE_ERROR" ? "error" : "ok"

/**
 * The traces in the spans of one resource: spans are grouped by trace id and
 * the earliest root span of each group becomes the trace. Input and output
 * come from the root's attributes or, when it has none, from the earliest
 * span of the trace that carries them. Groups without a root span (their root
 * came or comes in another export) give nothing.
 */
export const tracesOf = (resource: ResourceSpans): ReadonlyArray<SpanTrace> => {
  const spans = (resource.scopeSpans ?? []).flatMap((scope) => scope.spans ?? [])
  const groups = Arr.groupBy(spans, (span) => span.traceId.toLowerCase())
  return Object.entries(groups).flatMap(([traceId, group]) => {
    const ordered = Arr.sort(group, byStart)
    const root = ordered.find(isRoot)
    if (root === undefined) return []
    const text = (keys: ReadonlyArray<string>) =>
      attribute(root.attributes, ...keys).pipe(
        Option.orElse(() => Arr.findFirst(ordered, (span) => attribute(span.attributes, ...keys))),
        Option.getOrElse(() => "")
      )
    const trace: SpanTrace = {
      trace_id: traceId,
      name: root.name ?? "",
      status: statusOf(root),
      latency_ms: latencyMs(startOf(root), BigInt(root.endTimeUnixNano)),
      input: truncate(text(inputKeys)),
      output: truncate(text(outputKeys)),
      timestamp: timeOfNanos(startOf(root))
    }
    return [trace]
  })
}

/** A span read from an export, before it is tied to an agent. */
export interface SpanData {
  readonly trace_id: string
  readonly span_id: string
  readonly parent_span_id: string | null
  readonly name: string
  readonly kind: SpanKind
  readonly status: SpanStatus
  readonly status_message: string
  readonly start_time: ReturnType<typeof timeOfNanos>
  readonly end_time: ReturnType<typeof timeOfNanos>
  readonly duration_ms: number
  readonly attributes: Readonly<Record<string, string>>
  readonly events: ReadonlyArray<{
    readonly name: string
    readonly timestamp: ReturnType<typeof timeOfNanos>
    readonly attributes: Readonly<Record<string, string>>
  }>
}

/** The first `maxAttributes` attributes as text, each cut to `maxAttributeLength`. */
export const attributeTexts = (attributes: ReadonlyArray<KeyValue> | undefined): Record<string, string> => {
  const out: Record<string, string> = {}
  let count = 0
  for (const kv of attributes ?? []) {
    if (count >= maxAttributes) break
    if (kv.key in out) continue
    out[kv.key] = truncate(valueText(kv.value), maxAttributeLength)
    count++
  }
  return out
}

const kindOf = (span: Span): SpanKind =>
  typeof span.kind === "number"
    ? kindNames[span.kind]
    : span.kind === undefined
    ? "unspecified"
    : (span.kind.slice("SPAN_KIND_".length).toLowerCase() as SpanKind)

const spanStatusOf = (span: Span): SpanStatus => {
  const code = span.status?.code
  return code === 2 || code === "STATUS_CODE_ERROR" ? "error" : code === 1 || code === "STATUS_CODE_OK" ? "ok" : "unset"
}

/** Every span of a resource as stored (ids in lowercase), in the order of the export. */
export const spansOf = (resource: ResourceSpans): ReadonlyArray<SpanData> =>
  (resource.scopeSpans ?? []).flatMap((scope) => scope.spans ?? []).map((span): SpanData => {
    const start = startOf(span)
    const end = BigInt(span.endTimeUnixNano)
    return {
      trace_id: span.traceId.toLowerCase(),
      span_id: span.spanId.toLowerCase(),
      parent_span_id: isRoot(span) ? null : span.parentSpanId!.toLowerCase(),
      name: span.name ?? "",
      kind: kindOf(span),
      status: spanStatusOf(span),
      status_message: truncate(span.status?.message ?? "", maxAttributeLength),
      start_time: timeOfNanos(start),
      end_time: timeOfNanos(end),
      duration_ms: latencyMs(start, end),
      attributes: attributeTexts(span.attributes),
      events: (span.events ?? []).slice(0, maxEvents).map((event) => ({
        name: event.name ?? "",
        timestamp: timeOfNanos(BigInt(event.timeUnixNano ?? start)),
        attributes: attributeTexts(event.attributes)
      }))
    }
  })

/** How many spans a resource carries. */
export const spanCount = (resource: ResourceSpans): number =>
  (resource.scopeSpans ?? []).reduce((n, scope) => n + (scope.spans?.length ?? 0), 0)

/** The `service.name` resource attribute, which names the agent as `<account>/<agent>`. */
export const serviceName = (resource: ResourceSpans): Option.Option<string> =>
  attribute(resource.resource?.attributes, "service.name")
