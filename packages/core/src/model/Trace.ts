/**
 * Observability traces: one record per agent turn or per root span that an
 * agent exported, listed newest first for the members of the agent's account.
 * The trace of a chat turn holds the conversation's text, so only the
 * conversation's owner sees it.
 */
import { DateTime, Option, Schema } from "effect"
import { v7 as uuidV7 } from "uuid"
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

/** A trace as the API shows it (interface.md, Trace). */
export class Trace extends Schema.Class<Trace>("Trace")({
  trace_id: Schema.String,
  name: Schema.String,
  status: TraceStatus,
  latency_ms: Schema.Number,
  input: Schema.String,
  output: Schema.String,
  timestamp: Schema.DateTimeUtc
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

/** The API view of a stored trace. */
export const toView = (record: TraceRecord): Trace =>
  new Trace({
    trace_id: record.trace_id,
    name: record.name,
    status: record.status,
    latency_ms: record.latency_ms,
    input: record.input,
    output: record.output,
    timestamp: record.timestamp
  })

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
  readonly limit: number
  readonly offset: number
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
