import { Context, type DateTime, Effect, type Option } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { NewEvent, StoredEvent } from "../model/Event.js"
import type { AccountId } from "../model/Ids.js"

/** The account event log (the source of truth for the event stream). */
export class EventLog extends Context.Tag("@hosting/core/EventLog")<EventLog, {
  /** Appends events in the caller's transaction; ids are decimal strings that grow monotonically. */
  readonly append: (events: ReadonlyArray<NewEvent>, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageError>
  /** Events of an account after an id (all of them for None), oldest first, at most `limit`. */
  readonly after: (accountId: AccountId, afterId: Option.Option<string>, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageError>
  /** The newest `limit` events of an account after an id, oldest first. */
  readonly latest: (accountId: AccountId, afterId: Option.Option<string>, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageError>
  /**
   * Ids that bound the log of every account: `pruned` is the highest id ever
   * deleted by retention (0 when none), `newest` the highest id written (0 when none).
   */
  readonly horizon: Effect.Effect<{ readonly pruned: bigint; readonly newest: bigint }, StorageError>
  /** Deletes events created before the time; returns how many went. */
  readonly prune: (before: DateTime.Utc) => Effect.Effect<number, StorageError>
}>() {}
