/**
 * `hosting traces list`: an agent's traces, newest first.
 */
import { Command, Options } from "@effect/cli"
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
  offset: Options.integer("offset").pipe(Options.withDescription("Traces to skip"), Arguments.checked("--offset", Schema.NonNegative), Options.optional)
}, ({ agent, end, limit, offset, start, status }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const urlParams = {
      ...Option.match(start, { onNone: () => ({}), onSome: (start_time) => ({ start_time }) }),
      ...Option.match(end, { onNone: () => ({}), onSome: (end_time) => ({ end_time }) }),
      ...Option.match(status, { onNone: () => ({}), onSome: (s) => ({ status: s }) }),
      ...Option.match(limit, { onNone: () => ({}), onSome: (l) => ({ limit: l }) }),
      ...Option.match(offset, { onNone: () => ({}), onSome: (o) => ({ offset: o }) })
    }
    const page = yield* session.client.traces.list({ path: agent, urlParams })
    if (session.json) return yield* Output.json(page)
    yield* Output.line(Output.table([
      { header: "TRACE", value: (t) => t.trace_id },
      { header: "TIME", value: (t) => Output.date(t.timestamp) },
      { header: "NAME", value: (t) => t.name },
      { header: "STATUS", value: (t) => t.status },
      { header: "LATENCY", value: (t) => `${t.latency_ms.toFixed(1)} ms`, right: true },
      { header: "INPUT", value: (t) => Output.cut(t.input, 40) },
      { header: "OUTPUT", value: (t) => Output.cut(t.output, 40) }
    ], page.traces))
    if (page.traces.length > 0) {
      yield* Output.line(`${page.offset + 1}-${page.offset + page.traces.length} of ${page.total}`)
    }
  })).pipe(Command.withDescription("An agent's traces, newest first, filtered by time window and status"))

export const command = Command.make("traces").pipe(
  Command.withDescription("Traces of agents"),
  Command.withSubcommands([list])
)
