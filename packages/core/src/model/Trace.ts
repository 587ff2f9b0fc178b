/**
 * Observability traces: one record per agent turn or per root span that an
 * agent exported, listed newest first for the members of the agent's account.
 * The trace of a chat turn holds the conversation's text, so only the
 * conversation's owner sees it.
 */
import { DateTime, Either, Encoding, Option, Schema } from "effect"
import { v7 as uuidV7 } from "uuid"
import * as GenAi from "./GenAi.js"
import { AccountId, AgentName, UserId } from "./Ids.js"

/** `ok` or `error` (interface.md, Trace). */
export const TraceStatus = Schema.Literal("ok", "error")
export type TraceStatus = typeof TraceStatus.Type

/** The largest number of traces one page may hold. */
export const maxPageSize = 500
/** The page size when the caller names none. */
export const defaultPageSize = 50
/** Characters of input and output a trace keeps; longer text is cut and ends with an ellipsis. */
export const maxTextLength = 4096

/**
 * A trace as the API shows it (interface.md, Trace), with the model its spans
 * name first and the tokens they used (`summaryOf`; null when none says).
 */
export class Trace extends Schema.Class<Trace>("Trace")({
  trace_id: Schema.String,
  name: Schema.String,
  status: TraceStatus,
  latency_ms: Schema.Number,
  input: Schema.String,
  output: Schema.String,
  timestamp: Schema.DateTimeUtc,
  model: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  usage: Schema.optionalWith(Schema.NullOr(GenAi.Usage), { default: () => null })
}) {}

/**
 * A trace as stored. It belongs to the agent `publisher_id/agent_name` and
 * was produced for `account_id`: the deploying account for chat turns, the
 * agent's own account for exported spans. Only members of `account_id` see
 * it, and of those, when `owner_id` is set, only that user.
 */
export class TraceRecord extends Trace.extend<TraceRecord>("TraceRecord")({
  publisher_id: AccountId,
  agent_name: AgentName,
  account_id: AccountId,
  /**
   * The one user who may see the trace: the owner of the conversation a
   * chat turn belongs to (its input and output are the conversation's
   * text). None for exported spans, which every member sees.
   */
  owner_id: Schema.OptionFromNullOr(UserId)
}) {}

/**
 * Whether a trace may replace a stored one of the same id: both produced for
 * the same account and the same owner (or both for none).
 */
export const sameAudience = (stored: TraceRecord, incoming: TraceRecord): boolean =>
  stored.account_id === incoming.account_id && Option.getOrNull(stored.owner_id) === Option.getOrNull(incoming.owner_id)

/** The API view of a stored trace. */
export const toView = (record: TraceRecord): Trace =>
  new Trace({
    trace_id: record.trace_id,
    name: record.name,
    status: record.status,
    latency_ms: record.latency_ms,
    input: record.input,
    output: record.output,
    timestamp: record.timestamp,
    model: record.model,
    usage: record.usage
  })

/** The most spans one trace keeps: spans past it (in this export or a later one) are refused. */
export const maxSpansPerTrace = 1000
/** The most spans one export may carry: the spans past it are refused. */
export const maxSpansPerExport = 10_000
/** The most attributes a span or event keeps (the first ones); the most events a span keeps. */
export const maxAttributes = 128
export const maxEvents = 128
/** Characters an attribute value keeps (longer values are cut as input and output are). */
export const maxAttributeLength = 4096

/** A span's kind, as OpenTelemetry names them. */
export const SpanKind = Schema.Literal("unspecified", "internal", "server", "client", "producer", "consumer")
export type SpanKind = typeof SpanKind.Type

/** A span's status: OpenTelemetry's UNSET, OK and ERROR. */
export const SpanStatus = Schema.Literal("unset", "ok", "error")
export type SpanStatus = typeof SpanStatus.Type

/** Attributes as text: strings as they are, other values as JSON. */
export const Attributes = Schema.Record({ key: Schema.String, value: Schema.String })

/** Something that happened during a span (an exception, a retry). */
export class SpanEvent extends Schema.Class<SpanEvent>("SpanEvent")({
  name: Schema.String,
  timestamp: Schema.DateTimeUtc,
  attributes: Attributes
}) {}

/** One span of a trace as the API shows it. */
export class Span extends Schema.Class<Span>("Span")({
  span_id: Schema.String,
  parent_span_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  kind: SpanKind,
  status: SpanStatus,
  status_message: Schema.String,
  start_time: Schema.DateTimeUtc,
  end_time: Schema.DateTimeUtc,
  duration_ms: Schema.Number,
  attributes: Attributes,
  events: Schema.Array(SpanEvent)
}) {}

/** A span as stored: it belongs to the trace `trace_id` of the agent `publisher_id/agent_name`. */
export class SpanRecord extends Span.extend<SpanRecord>("SpanRecord")({
  publisher_id: AccountId,
  agent_name: AgentName,
  trace_id: Schema.String
}) {}

/**
 * A span with what the GenAI conventions say of it (`gen_ai`, null when
 * nothing), and the spans started under it, in the order they started.
 */
export interface SpanNode extends Span {
  readonly gen_ai: GenAi.GenAi | null
  readonly children: ReadonlyArray<SpanNode>
}

export const SpanNode: Schema.Schema<SpanNode, SpanNodeEncoded> = Schema.Struct({
  ...Span.fields,
  gen_ai: Schema.NullOr(GenAi.GenAi),
  children: Schema.Array(Schema.suspend((): Schema.Schema<SpanNode, SpanNodeEncoded> => SpanNode))
}).annotations({ identifier: "SpanNode" }) as any

export interface SpanNodeEncoded extends Schema.Struct.Encoded<typeof Span.fields> {
  readonly gen_ai: GenAi.GenAi | null
  readonly children: ReadonlyArray<SpanNodeEncoded>
}

/**
 * A trace with its span tree (`GET .../observability/traces/{traceId}`),
 * the model its spans name first and the tokens they used (GenAi.ts).
 */
export const TraceDetail = Schema.Struct({
  ...Trace.fields,
  model: Schema.NullOr(Schema.String),
  usage: Schema.NullOr(GenAi.Usage),
  spans: Schema.Array(SpanNode)
}).annotations({ identifier: "TraceDetail" })
export type TraceDetail = typeof TraceDetail.Type

const spanView = (record: SpanRecord): Omit<SpanNode, "children"> => ({
  gen_ai: GenAi.genAiOf(record.attributes),
  span_id: record.span_id,
  parent_span_id: record.parent_span_id,
  name: record.name,
  kind: record.kind,
  status: record.status,
  status_message: record.status_message,
  start_time: record.start_time,
  end_time: record.end_time,
  duration_ms: record.duration_ms,
  attributes: record.attributes,
  events: record.events
})

/**
 * The span tree of a trace's spans: each span under its parent, roots (and
 * spans whose parent is not stored) at the top, siblings in the order they
 * started. A parent chain that loops (ids reused by a broken exporter) is
 * cut where it loops, so every span appears once.
 */
export const spanTree = (spans: ReadonlyArray<SpanRecord>): ReadonlyArray<SpanNode> => {
  const ordered = [...spans].sort((a, b) =>
    a.start_time.epochMillis - b.start_time.epochMillis || (a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0)
  )
  const byId = new Map(ordered.map((span) => [span.span_id, span]))
  const children = new Map<string, Array<SpanRecord>>()
  const roots: Array<SpanRecord> = []
  for (const span of ordered) {
    const parent = span.parent_span_id
    if (parent !== null && parent !== span.span_id && byId.has(parent)) {
      const siblings = children.get(parent)
      if (siblings === undefined) children.set(parent, [span])
      else siblings.push(span)
    } else roots.push(span)
  }
  const placed = new Set<string>()
  const build = (span: SpanRecord): SpanNode => {
    placed.add(span.span_id)
    const under = (children.get(span.span_id) ?? []).filter((child) => !placed.has(child.span_id))
    return { ...spanView(span), children: under.map(build) }
  }
  const tree = roots.map(build)
  // Spans caught in a loop of parents reach no root: they are shown at the top.
  for (const span of ordered) if (!placed.has(span.span_id)) tree.push(build(span))
  return tree
}

/** The view of a trace with its spans. */
export const toDetail = (record: TraceRecord, spans: ReadonlyArray<SpanRecord>): TraceDetail => {
  const tree = spanTree(spans)
  return { ...toView(record), model: GenAi.modelOf(tree), usage: GenAi.usageOf(tree), spans: tree }
}

/**
 * The model and token usage of a trace from its spans, as its detail shows
 * them: what a store keeps on the trace's row for the listing.
 */
export const summaryOf = (spans: ReadonlyArray<SpanRecord>): { readonly model: string | null; readonly usage: GenAi.Usage | null } => {
  if (spans.length === 0) return { model: null, usage: null }
  const tree = spanTree(spans)
  return { model: GenAi.modelOf(tree), usage: GenAi.usageOf(tree) }
}

/** The key of a span's trace among an export's agents: publisher, agent and trace id. */
export const spanTraceKey = (span: { readonly publisher_id: string; readonly agent_name: string; readonly trace_id: string }) =>
  `${span.publisher_id}\u0000${span.agent_name}\u0000${span.trace_id}`

/**
 * Which of `incoming` spans a store keeps, given the span ids it holds per
 * trace (`stored`, by `spanTraceKey`): a span already stored is replaced, a new one is kept
 * while its trace holds fewer than `maxSpansPerTrace`. The rule both stores
 * share.
 */
export const withinSpanBound = (
  stored: ReadonlyMap<string, ReadonlySet<string>>,
  incoming: ReadonlyArray<SpanRecord>,
  max = maxSpansPerTrace
): ReadonlyArray<SpanRecord> => {
  const held = new Map<string, Set<string>>()
  const kept: Array<SpanRecord> = []
  for (const span of incoming) {
    const key = spanTraceKey(span)
    let ids = held.get(key)
    if (ids === undefined) held.set(key, ids = new Set(stored.get(key) ?? []))
    if (ids.has(span.span_id) || ids.size < max) {
      ids.add(span.span_id)
      kept.push(span)
    }
  }
  return kept
}

/** A filtered, paged query of one agent's traces. */
export interface TraceQuery {
  readonly publisher_id: AccountId
  readonly agent_name: AgentName
  /** Only traces produced for these accounts. */
  readonly account_ids: ReadonlyArray<AccountId>
  /** Who reads: traces with an owner are left out unless this user owns them. */
  readonly viewer: UserId
  /** Inclusive lower bound of `timestamp`. */
  readonly start: Option.Option<DateTime.Utc>
  /** Inclusive upper bound of `timestamp`. */
  readonly end: Option.Option<DateTime.Utc>
  readonly status: Option.Option<TraceStatus>
  /** Only traces whose model (the one their spans name first) is this. */
  readonly model: Option.Option<string>
  /** Only traces after this one in the listing's order (a keyset cursor). */
  readonly after: Option.Option<TraceCursor>
  readonly limit: number
  readonly offset: number
}

/** Where a page of the listing ends: its last trace's start and id (the order is start, then id, both descending). */
export interface TraceCursor {
  readonly timestamp: DateTime.Utc
  readonly trace_id: string
}

const cursorPrefix = "t1."
const cursorTraceId = /^[A-Za-z0-9._-]{1,64}$/

/** A cursor as the API gives it: opaque text (base64url). */
export const encodeCursor = (cursor: TraceCursor): string =>
  cursorPrefix + Encoding.encodeBase64Url(`${cursor.timestamp.epochMillis}:${cursor.trace_id}`)

/** The cursor of a `cursor` parameter; None when it is not one this server gave. */
export const decodeCursor = (text: string): Option.Option<TraceCursor> => {
  if (!text.startsWith(cursorPrefix) || text.length > 200 || !/^[A-Za-z0-9_-]*$/.test(text.slice(cursorPrefix.length))) {
    return Option.none()
  }
  const decoded = Encoding.decodeBase64UrlString(text.slice(cursorPrefix.length))
  if (Either.isLeft(decoded)) return Option.none()
  const match = /^(\d{1,15}):(.*)$/.exec(decoded.right)
  if (match === null || !cursorTraceId.test(match[2]!)) return Option.none()
  const millis = Number(match[1])
  if (millis > 8_640_000_000_000_000) return Option.none()
  return Option.some({ timestamp: DateTime.unsafeMake(millis), trace_id: match[2]! })
}

/** Who looks for one trace: the same visibility as a query's. */
export interface TraceLookup {
  readonly publisher_id: AccountId
  readonly agent_name: AgentName
  readonly trace_id: string
  readonly account_ids: ReadonlyArray<AccountId>
  readonly viewer: UserId
}

/** Cuts text to `maxTextLength` characters (never inside a surrogate pair), marking the cut with "…". */
export const truncate = (text: string, max = maxTextLength): string => {
  if (text.length <= max) return text
  let end = max - 1
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end -= 1
  return `${text.slice(0, end)}…`
}

/**
 * An RFC 3339 date-time (`2026-11-01T10:00:00Z`, `2026-11-01T12:00:00.5+02:00`),
 * decoded to UTC. Looser forms that `Date` would accept are refused.
 */
export const Rfc3339 = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/, {
    message: () => "must be an RFC 3339 date-time such as 2026-11-01T10:00:00Z"
  }),
  Schema.compose(Schema.DateTimeUtc),
  Schema.annotations({ identifier: "Rfc3339", description: "RFC 3339 date-time, for example 2026-11-01T10:00:00Z" })
)

/** Milliseconds between two nanosecond instants, as a double. */
export const latencyMs = (startNanos: bigint, endNanos: bigint): number =>
  endNanos > startNanos ? Number(endNanos - startNanos) / 1e6 : 0

/** The instant of a nanosecond Unix time. */
export const timeOfNanos = (nanos: bigint): DateTime.Utc => DateTime.unsafeMake(Number(nanos / 1_000_000n))

/**
 * An OpenTelemetry-style trace id for a trace recorded here: 32 lowercase hex
 * digits, those of a UUID v7 (a millisecond timestamp, then random bits), so
 * that an agent's new traces are stored next to each other.
 */
export const newTraceId = (): string => uuidV7().replaceAll("-", "")

/** Two hex digits of each byte. */
const hexOfByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))

/** Random bytes drawn 4 KB at a time (one `getRandomValues` of 8 bytes cost about 3 µs a span id), and how many are used. */
const randomPool = new Uint8Array(4096)
let randomUsed = randomPool.length

/** A new random span id: 16 lowercase hex digits, not all zero (W3C Trace Context). */
export const newSpanId = (): string => {
  if (randomUsed + 8 > randomPool.length) {
    globalThis.crypto.getRandomValues(randomPool)
    randomUsed = 0
  }
  let id = ""
  for (let i = 0; i < 7; i++) id += hexOfByte[randomPool[randomUsed + i]!]
  id += hexOfByte[randomPool[randomUsed + 7]! | 1]
  randomUsed += 8
  return id
}
