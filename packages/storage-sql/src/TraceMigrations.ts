/**
 * Migrations of the traces' queries (issue 30), beside `Migrations.ts`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A reply names the trace of its turn; a trace row keeps the model and the
 * token totals its spans report, so that the listing filters and shows them
 * without reading spans; an index serves each filter of the listing, and
 * one on the start time alone (of traces, and of spans whose trace never
 * came) serves the retention sweep.
 */
export const traceQueries = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE messages ADD COLUMN trace_id TEXT`
  yield* sql`ALTER TABLE traces ADD COLUMN model TEXT`
  yield* sql`ALTER TABLE traces ADD COLUMN input_tokens BIGINT`
  yield* sql`ALTER TABLE traces ADD COLUMN output_tokens BIGINT`
  yield* sql`CREATE INDEX traces_agent_status_time ON traces (publisher_id, agent_name, status, started_at)`
  yield* sql`CREATE INDEX traces_agent_model_time ON traces (publisher_id, agent_name, model, started_at)`
  yield* sql`CREATE INDEX traces_time ON traces (started_at)`
  yield* sql`CREATE INDEX trace_spans_time ON trace_spans (started_at)`
})
