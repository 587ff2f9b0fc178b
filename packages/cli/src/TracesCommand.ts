/**
 * `hosting traces list`: an agent's traces, newest first; `hosting traces
 * show`: one trace with its span tree.
 */
import { Args, Command, Options } from "@effect/cli"
import { TracesApi } from "@hosting/api"
import { Trace } from "@hosting/core"
import { Effect, Option, Schema } from "effect"
import * as Arguments from "./Arguments.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

const list = Command.make("list", {
  agent: Arguments.agent,
  start: Options.text("start").pipe(
    Options.withDescription("Traces at or after this time (RFC 3339, e.g. 2026-11-01T00:00:00Z)"),
    Arguments.checked("--start", Trace.Rfc3339),
    Options.optional
  ),
  end: Options.text("end").pipe(
    Options.withDescription("Traces at or before this time (RFC 3339)"),
    Arguments.checked("--end", Trace.Rfc3339),
    Options.optional
  ),
  status: Options.choice("status", ["ok", "error"]).pipe(Options.withDescription("Only traces with this status"), Options.optional),
  limit: Options.integer("limit").pipe(
    Options.withDescription(`Traces per page, 1 to ${Trace.maxPageSize} (default ${Trace.defaultPageSize})`),
    Arguments.checked("--limit", Schema.Number.pipe(Schema.between(1, Trace.maxPageSize))),
    Options.optional
  ),
  offset: Options.integer("offset").pipe(Options.withDescription("Traces to skip"), Arguments.checked("--offset", Schema.NonNegative), Options.optional),
  model: Options.text("model").pipe(
    Options.withDescription("Only traces whose model (the first their spans name) is this"),
    Arguments.checked("--model", TracesApi.ModelName),
    Options.optional
  ),
  cursor: Options.text("cursor").pipe(
    Options.withDescription("The page after an earlier one: the cursor it printed (not with --offset)"),
    Arguments.checked("--cursor", TracesApi.Cursor),
    Options.optional
  )
}, ({ agent, cursor, end, limit, model, offset, start, status }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const urlParams = {
      ...Option.match(start, { onNone: () => ({}), onSome: (start_time) => ({ start_time }) }),
      ...Option.match(end, { onNone: () => ({}), onSome: (end_time) => ({ end_time }) }),
      ...Option.match(status, { onNone: () => ({}), onSome: (s) => ({ status: s }) }),
      ...Option.match(limit, { onNone: () => ({}), onSome: (l) => ({ limit: l }) }),
      ...Option.match(offset, { onNone: () => ({}), onSome: (o) => ({ offset: o }) }),
      ...Option.match(model, { onNone: () => ({}), onSome: (m) => ({ model: m }) }),
      ...Option.match(cursor, { onNone: () => ({}), onSome: (c) => ({ cursor: c }) })
    }
    const page = yield* session.client.traces.list({ path: agent, urlParams })
    if (session.json) return yield* Output.json(page)
    yield* Output.line(Output.table([
      { header: "TRACE", value: (t) => t.trace_id },
      { header: "TIME", value: (t) => Output.date(t.timestamp) },
      { header: "NAME", value: (t) => t.name },
      { header: "STATUS", value: (t) => t.status },
      { header: "LATENCY", value: (t) => `${t.latency_ms.toFixed(1)} ms`, right: true },
      { header: "MODEL", value: (t) => t.model ?? "-" },
      { header: "TOKENS", value: (t) => (t.usage === null ? "-" : `${t.usage.input_tokens}/${t.usage.output_tokens}`), right: true },
      { header: "INPUT", value: (t) => Output.cut(t.input, 40) },
      { header: "OUTPUT", value: (t) => Output.cut(t.output, 40) }
    ], page.traces))
    if (page.traces.length > 0) {
      yield* Output.line(`${page.offset + 1}-${page.offset + page.traces.length} of ${page.total}`)
    }
    if (page.next_cursor !== null) yield* Output.line(`next page: --cursor ${page.next_cursor}`)
  })).pipe(Command.withDescription("An agent's traces, newest first, filtered by time window, status and model; tokens are input/output"))

/** One line per span, indented under its parent: name, kind, status, duration, and the model and tokens of a model call. */
const spanLines = (spans: ReadonlyArray<Trace.SpanNode>, depth = 0): ReadonlyArray<string> =>
  spans.flatMap((span) => {
    const facts = span.gen_ai
    const model = facts === null
      ? ""
      : [
        facts.model ?? "",
        facts.input_tokens === null && facts.output_tokens === null
          ? ""
          : `${facts.input_tokens ?? 0} in / ${facts.output_tokens ?? 0} out tokens`
      ].filter((part) => part !== "").join(", ")
    const status = span.status === "error" ? `error${span.status_message === "" ? "" : `: ${Output.cut(span.status_message, 60)}`}` : span.status
    const line = `${"  ".repeat(depth)}${span.name}  [${span.kind}, ${status}, ${span.duration_ms.toFixed(1)} ms${model === "" ? "" : `, ${model}`}]`
    return [line, ...spanLines(span.children, depth + 1)]
  })

const show = Command.make("show", {
  agent: Arguments.agent,
  traceId: Args.text({ name: "trace-id" }).pipe(Args.withDescription("The trace's id (see `hosting traces list`)"))
}, ({ agent, traceId }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const trace = yield* session.client.traces.get({ path: { ...agent, traceId } })
    if (session.json) return yield* Output.json(trace)
    yield* Output.line(
      `${trace.trace_id}  ${trace.name}  ${trace.status}  ${trace.latency_ms.toFixed(1)} ms  ${Output.date(trace.timestamp)}`
    )
    if (trace.model !== null) yield* Output.line(`model: ${trace.model}`)
    if (trace.usage !== null) yield* Output.line(`tokens: ${trace.usage.input_tokens} in / ${trace.usage.output_tokens} out`)
    if (trace.input !== "") yield* Output.line(`input: ${Output.cut(trace.input, 200)}`)
    if (trace.output !== "") yield* Output.line(`output: ${Output.cut(trace.output, 200)}`)
    for (const line of spanLines(trace.spans)) yield* Output.line(line)
  })).pipe(Command.withDescription("One trace of an agent with its span tree, the model and the tokens it used"))

export const command = Command.make("traces").pipe(
  Command.withDescription("Traces of agents"),
  Command.withSubcommands([list, show])
)
