import { Context, type DateTime, Effect, type Option } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { UserId } from "../model/Ids.js"

/** A device login in progress (RFC 8628): stored by the hash of its device code. */
export interface DeviceCodeRecord {
  readonly device_hash: string
  /** What the user types on the approval page: `XXXX-XXXX`. */
  readonly user_code: string
  readonly client_id: string
  readonly scope: string
  readonly status: "pending" | "approved" | "denied"
  /** Who approved or denied it. */
  readonly user_id: Option.Option<UserId>
  /** The hash of the credential (a browser session) it was decided with: the access token it gives is made from it. */
  readonly decided_by: Option.Option<string>
  /** Seconds the client must wait between polls (grows with slow_down). */
  readonly interval: number
  readonly last_polled_at: Option.Option<DateTime.Utc>
  readonly expires_at: DateTime.Utc
  readonly created_at: DateTime.Utc
}

/** Device logins in progress. */
export class DeviceCodeStore extends Context.Tag("@hosting/core/DeviceCodeStore")<DeviceCodeStore, {
  readonly insert: (record: DeviceCodeRecord) => Effect.Effect<void, StorageError>
  readonly findByUserCode: (userCode: string) => Effect.Effect<Option.Option<DeviceCodeRecord>, StorageError>
  readonly findByDeviceHash: (hash: string) => Effect.Effect<Option.Option<DeviceCodeRecord>, StorageError>
  /**
   * Records the user's decision on a pending code, made with the credential
   * of hash `decidedBy`; `false` when it was not pending any more. The code
   * goes when that credential is removed.
   */
  readonly decide: (
    userCode: string,
    status: "approved" | "denied",
    userId: UserId,
    decidedBy: string
  ) => Effect.Effect<boolean, StorageError>
  /** Records a poll and the interval the client must keep from now on. */
  readonly recordPoll: (hash: string, at: DateTime.Utc, interval: number) => Effect.Effect<void, StorageError>
  /** Removes a code; `false` when another poll removed it first (a code gives at most one token). */
  readonly remove: (hash: string) => Effect.Effect<boolean, StorageError>
  /** Removes codes that expired before the time; returns how many went. */
  readonly pruneExpired: (before: DateTime.Utc) => Effect.Effect<number, StorageError>
}>() {}
