/**
 * Observability use cases: list an agent's traces, and take traces exported
 * by agents over OTLP. Chat records a trace per agent turn through the same
 * store (Chat.ts).
 */
import { Cause, Context, DateTime, Duration, Effect, Either, Layer, Option, Schedule, Schema } from "effect"
import { AgentNotFound, InvalidRequest, PermissionDenied, TraceNotFound, TracesUnavailable } from "../model/Errors.js"
import { AccountName, AgentName } from "../model/Ids.js"
import { accountIdNamed, orFail } from "../internal/lookup.js"
import * as Otlp from "../model/Otlp.js"
import * as TraceStats from "../model/TraceStats.js"
import { AccountStore, AgentStore, DeploymentStore, TraceStore, Transactor } from "../ports/Ports.js"
import * as Policy from "../model/Policy.js"
import type { Principal } from "../model/Principal.js"
import {
  decodeCursor,
  defaultPageSize,
  encodeCursor,
  maxPageSize,
  maxSpansPerExport,
  maxSpansPerTrace,
  SpanEvent,
  SpanRecord,
  spanTraceKey,
  toDetail,
  toView,
  TraceRecord,
  type TraceStatus
} from "../model/Trace.js"
import * as Tracing from "../runtime/Tracing.js"

/** Settings of observability. */
export class TracesConfig extends Context.Reference<TracesConfig>()("@hosting/core/TracesConfig", {
  defaultValue: (): TracesSettings => ({ enabled: true, retentionDays: defaultRetentionDays })
}) {}

/** Settings of observability. */
export interface TracesSettings {
  /** `false` (HOSTING_TRACES=off): the routes answer 503 and chat records nothing. */
  readonly enabled: boolean
  /** Traces older than this many days are deleted by the sweep (HOSTING_TRACE_RETENTION_DAYS); 0 keeps them. */
  readonly retentionDays?: number | undefined
  /** How often the retention sweep runs (1 hour unless given). */
  readonly sweepInterval?: Duration.DurationInput | undefined
}

/** Days a trace is kept when HOSTING_TRACE_RETENTION_DAYS is not set. */
export const defaultRetentionDays = 30
/** Traces the sweep deletes per statement batch, and the most batches of one round (the rest waits for the next). */
const sweepBatch = 500
const sweepRounds = 200

/** Filters and page of a traces listing (interface.md, Observability). */
export interface ListInput {
  readonly start_time?: DateTime.Utc | undefined
  readonly end_time?: DateTime.Utc | undefined
  readonly status?: TraceStatus | undefined
  readonly model?: string | undefined
  /** A `next_cursor` of an earlier page: the page after it. */
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** The window and buckets of `stats`. */
export interface StatsInput {
  readonly start_time: DateTime.Utc
  readonly end_time: DateTime.Utc
  readonly buckets?: number | undefined
}

/** What an export did: spans refused (with why) when some were taken. */
export interface IngestResult {
  readonly accepted: number
  readonly rejectedSpans: number
  readonly errorMessage: Option.Option<string>
}

const serviceNamePattern = /^([^/]+)\/([^/]+)$/
const isAccountName = Schema.is(AccountName)
const isAgentName = Schema.is(AgentName)

export class Traces extends Effect.Service<Traces>()("@hosting/core/Traces", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const agents = yield* AgentStore
    const deployments = yield* DeploymentStore
    const store = yield* TraceStore
    const tx = yield* Transactor
    const config = yield* TracesConfig

    const available = config.enabled
      ? Effect.void
      : Effect.fail(new TracesUnavailable({ details: "Traces are switched off on this server (HOSTING_TRACES=off)." }))

    /**
     * The agent's account, if the caller may read the agent's traces: members
     * of the agent's account, and members of an account that deploys it.
     */
    const readable = Effect.fnUntraced(function*(principal: Principal, account: AccountName, name: AgentName) {
      const refused = () => Policy.agentActivityRefused(account, name, "traces")
      const mine = Policy.memberAccounts(principal)
      const publisherId = yield* accountIdNamed(accounts, principal, account, refused)
      // A member of the agent's account may read without a look at the deployments.
      if (!Policy.isMemberOf(principal, publisherId)) {
        const deployed = yield* deployments.listForAgent(publisherId, name, mine)
        if (!Policy.readsAgentActivity(principal, publisherId, deployed.length > 0)) return yield* refused()
      }
      return { publisherId, mine }
    })

    /**
     * One trace of an agent with its span tree, when the caller may see it
     * (the rules of `list`); otherwise, or when there is no such trace, 404.
     */
    const get = Tracing.fn("Traces.get")(function*(principal: Principal, account: AccountName, name: AgentName, traceId: string) {
      yield* available
      const { mine, publisherId } = yield* readable(principal, account, name)
      const found = yield* store.find({
        publisher_id: publisherId,
        agent_name: name,
        trace_id: traceId.toLowerCase(),
        account_ids: mine,
        viewer: principal.user.id
      })
      if (Option.isNone(found)) return yield* new TraceNotFound({ trace_id: traceId })
      return toDetail(found.value.trace, found.value.spans)
    })

    /**
     * An agent's traces that the caller may see, newest first: those produced
     * for the caller's accounts, less the chat turns of other users'
     * conversations. Members of the agent's account, and members of an
     * account that deploys it, may list; anyone else gets 403.
     */
    const list = Tracing.fn("Traces.list")(function*(
      principal: Principal,
      account: AccountName,
      name: AgentName,
      input: ListInput
    ) {
      yield* available
      const limit = input.limit ?? defaultPageSize
      const offset = input.offset ?? 0
      if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
        return yield* new InvalidRequest({ details: `limit: must be an integer from 1 to ${maxPageSize}` })
      }
      if (!Number.isInteger(offset) || offset < 0) {
        return yield* new InvalidRequest({ details: "offset: must be an integer of 0 or more" })
      }
      if (input.start_time !== undefined && input.end_time !== undefined && input.start_time.epochMillis > input.end_time.epochMillis) {
        return yield* new InvalidRequest({ details: "start_time: must not be after end_time" })
      }
      const after = input.cursor === undefined ? Option.none() : decodeCursor(input.cursor)
      if (input.cursor !== undefined && Option.isNone(after)) {
        return yield* new InvalidRequest({ details: "cursor: not a next_cursor this server gave" })
      }
      if (input.cursor !== undefined && offset > 0) {
        return yield* new InvalidRequest({ details: "offset: cannot be combined with cursor (the cursor says where the page starts)" })
      }
      const { mine, publisherId } = yield* readable(principal, account, name)
      const page = yield* store.query({
        publisher_id: publisherId,
        agent_name: name,
        account_ids: mine,
        viewer: principal.user.id,
        start: Option.fromNullable(input.start_time),
        end: Option.fromNullable(input.end_time),
        status: Option.fromNullable(input.status),
        model: Option.fromNullable(input.model),
        after,
        // One more than the page, to know whether a page follows.
        limit: limit + 1,
        offset
      })
      const traces = page.traces.slice(0, limit)
      const last = traces.at(-1)
      const next_cursor = page.traces.length > limit && last !== undefined
        ? encodeCursor({ timestamp: last.timestamp, trace_id: last.trace_id })
        : null
      return { traces: traces.map(toView), total: page.total, limit, offset, next_cursor }
    })

    /**
     * Latency percentiles and error rate over the window `[start_time,
     * end_time]` cut into `buckets` (the traces the caller would list).
     */
    const stats = Tracing.fn("Traces.stats")(function*(principal: Principal, account: AccountName, name: AgentName, input: StatsInput) {
      yield* available
      const count = input.buckets ?? TraceStats.defaultBuckets
      if (!Number.isInteger(count) || count < 1 || count > TraceStats.maxBuckets) {
        return yield* new InvalidRequest({ details: `buckets: must be an integer from 1 to ${TraceStats.maxBuckets}` })
      }
      if (input.start_time.epochMillis > input.end_time.epochMillis) {
        return yield* new InvalidRequest({ details: "start_time: must not be after end_time" })
      }
      const { mine, publisherId } = yield* readable(principal, account, name)
      const { bounds, width } = TraceStats.boundsOf(input.start_time, input.end_time, count)
      const figures = yield* store.stats({ publisher_id: publisherId, agent_name: name, account_ids: mine, viewer: principal.user.id, bounds })
      const answer: TraceStats.TraceStats = {
        start_time: input.start_time,
        end_time: input.end_time,
        bucket_ms: width,
        buckets: bounds.map((b, i) => TraceStats.bucketOf(b, figures[i] ?? TraceStats.figuresOf([])))
      }
      return answer
    })

    /** Why the spans of one resource are refused, as an error of its own kind. */
    type Refusal = InvalidRequest | AgentNotFound | PermissionDenied

    /** The agent a resource names, if the caller may export traces for it. */
    const agentOf = Effect.fnUntraced(function*(principal: Principal, resource: Otlp.ResourceSpans) {
      const service = Otlp.serviceName(resource)
      const parts = Option.flatMap(service, (s) => Option.fromNullable(serviceNamePattern.exec(s)))
      if (Option.isNone(parts)) {
        return yield* Effect.fail<Refusal>(new InvalidRequest({
          details: `service.name: ${Option.match(service, { onNone: () => "missing", onSome: (s) => `"${s}" is not` })} <account>/<agent>`
        }))
      }
      const [, accountText, nameText] = parts.value
      const ref = `${accountText}/${nameText}`
      if (!isAccountName(accountText) || !isAgentName(nameText)) {
        return yield* Effect.fail<Refusal>(new InvalidRequest({ details: `service.name: "${ref}" is not <account>/<agent>` }))
      }
      const refused = Policy.traceExportRefused(accountText, nameText)
      const publisher = yield* accounts.findByName(accountText).pipe(orFail((): Refusal => refused))
      if (!Policy.exportsTraces(principal, publisher.id)) return yield* Effect.fail<Refusal>(refused)
      yield* agents.findAgent(publisher.id, nameText).pipe(orFail((): Refusal => new AgentNotFound({ agent: ref })))
      return { publisher_id: publisher.id, agent_name: nameText }
    })

    /**
     * Takes an OTLP export. Resources whose `service.name` does not name an
     * agent the caller may export for are refused with their spans; when
     * nothing is taken the first refusal is the answer, otherwise the export
     * succeeds partially (OTLP `partialSuccess`).
     */
    const ingest = Tracing.fn("Traces.ingest")(function*(principal: Principal, request: Otlp.ExportTraceServiceRequest) {
      yield* available
      const records: Array<TraceRecord> = []
      const spans: Array<SpanRecord> = []
      const refusals: Array<Refusal> = []
      let rejectedSpans = 0
      let acceptedSpans = 0
      /** Spans of this export per trace, to refuse those past the per-trace bound. */
      const perTrace = new Map<string, number>()
      let overBound = 0
      for (const resource of request.resourceSpans ?? []) {
        const count = Otlp.spanCount(resource)
        if (count === 0) continue
        const agent = yield* agentOf(principal, resource).pipe(
          Effect.map(Either.right),
          Effect.catchIf((e): e is Refusal => e._tag !== "StorageError", (e) => Effect.succeed(Either.left(e)))
        )
        if (agent._tag === "Left") {
          refusals.push(agent.left)
          rejectedSpans += count
          continue
        }
        acceptedSpans += count
        for (const span of Otlp.spansOf(resource)) {
          const key = spanTraceKey({ ...agent.right, trace_id: span.trace_id })
          const inTrace = (perTrace.get(key) ?? 0) + 1
          perTrace.set(key, inTrace)
          if (spans.length >= maxSpansPerExport || inTrace > maxSpansPerTrace) {
            overBound++
            continue
          }
          spans.push(new SpanRecord({ ...span, ...agent.right, events: span.events.map((e) => new SpanEvent(e)) }))
        }
        for (const trace of Otlp.tracesOf(resource)) {
          // Exported spans are the agent's own record of its work: every member of its account sees them.
          records.push(new TraceRecord({ ...trace, ...agent.right, account_id: agent.right.publisher_id, owner_id: Option.none() }))
        }
      }
      if (acceptedSpans === 0 && refusals.length > 0) return yield* Effect.fail(refusals[0]!)
      // The traces and their spans land together, or neither does.
      if (records.length > 0 || spans.length > 0) {
        yield* tx.withTransaction(Effect.zipRight(
          records.length > 0 ? store.append(records) : Effect.void,
          spans.length > 0 ? store.appendSpans(spans) : Effect.void
        ))
      }
      const messages = [...new Set(refusals.map((r) => r.message))]
      if (overBound > 0) {
        messages.push(
          `${overBound} spans past the bounds were not stored (at most ${maxSpansPerTrace} per trace and ${maxSpansPerExport} per export).`
        )
      }
      const result: IngestResult = {
        accepted: records.length,
        rejectedSpans: rejectedSpans + overBound,
        errorMessage: messages.length === 0 ? Option.none() : Option.some(messages.join(" "))
      }
      return result
    })

    /**
     * Deletes the traces (and their spans) older than the retention, in
     * batches of `sweepBatch`, at most `sweepRounds` of them; answers how
     * many it deleted. Nothing while the retention is 0.
     */
    const sweep = Tracing.fn("Traces.sweep")(function*() {
      const days = config.retentionDays ?? defaultRetentionDays
      if (days <= 0) return 0
      const before = DateTime.subtract(yield* DateTime.now, { days })
      let removed = 0
      for (let round = 0; round < sweepRounds; round++) {
        const now = yield* store.sweep(before, sweepBatch)
        removed += now
        if (now === 0) break
      }
      return removed
    })

    return { list, get, stats, ingest, sweep } as const
  })
}) {}

/**
 * Deletes the traces past their retention at start and then every
 * `sweepInterval` of TracesConfig (1 hour by default), for the life of the
 * layer; nothing while the retention is 0. A failed sweep is logged and the
 * next one tries again.
 */
export const retentionSweep = Layer.scopedDiscard(
  Effect.gen(function*() {
    const traces = yield* Traces
    const config = yield* TracesConfig
    if (!config.enabled || (config.retentionDays ?? defaultRetentionDays) <= 0) return
    yield* traces.sweep().pipe(
      Effect.tap((removed) => removed > 0 ? Effect.logInfo(`traces: ${removed} traces past their retention deleted`) : Effect.void),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logWarning("traces: the retention sweep failed", cause)
      ),
      Effect.repeat(Schedule.spaced(Duration.decode(config.sweepInterval ?? Duration.hours(1)))),
      Effect.forkScoped
    )
  })
)
