/**
 * Queries of a trace store for tests: the first page of 50 of an agent's
 * traces as a reader sees them, with no filter, no cursor and no offset
 * unless given.
 */
import type { Trace } from "@hosting/core"
import { Option } from "effect"

/** Who reads which agent's traces; any other field of the query may be given too. */
export type Reader = Pick<Trace.TraceQuery, "publisher_id" | "agent_name" | "account_ids" | "viewer"> & Partial<Trace.TraceQuery>

/** The query of `reader`: the first page of 50, newest first, unfiltered, with whatever else it gives. */
export const of = (reader: Reader): Trace.TraceQuery => ({
  start: Option.none(),
  end: Option.none(),
  status: Option.none(),
  model: Option.none(),
  after: Option.none(),
  limit: 50,
  offset: 0,
  ...reader
})
