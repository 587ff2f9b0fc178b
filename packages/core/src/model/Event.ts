/**
 * Events of an account's stream. The log is the truth; live delivery only
 * wakes subscribers, who then read from the log.
 */
import { Schema } from "effect"
import { AccountId } from "./Ids.js"

/** Event kinds that the account stream carries. */
export const EventType = Schema.Literal("agent.build", "deployment.changed")
export type EventType = typeof EventType.Type

/** The payload of an `agent.build` event. */
export class AgentBuildEvent extends Schema.Class<AgentBuildEvent>("AgentBuildEvent")({
  agent: Schema.String,
  build_id: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String),
  /** The channel that moved or was removed (status `channel_set`, `channel_removed`). */
  channel: Schema.optional(Schema.String),
  /** Why a version was yanked (status `yanked`). */
  reason: Schema.optional(Schema.String)
}) {}

/** One event to append, for one account's stream. */
export interface NewEvent {
  readonly account_id: AccountId
  readonly type: EventType
  readonly data: Readonly<Record<string, unknown>>
}

/** An event as stored, with its monotonic id. */
export class StoredEvent extends Schema.Class<StoredEvent>("StoredEvent")({
  id: Schema.String,
  account_id: AccountId,
  type: EventType,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.DateTimeUtc
}) {}
