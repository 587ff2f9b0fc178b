/**
 * The object store port: where file bytes live. Keys are made by the
 * platform from ids, never taken from user input.
 */
import { Context, type Duration, type Effect, type Option, Schema, type Stream } from "effect"

/** The store failed or cannot be reached. `message` is safe to show; `cause` is for the log. */
export class ObjectStoreError extends Schema.TaggedError<ObjectStoreError>()("ObjectStoreError", {
  reason: Schema.Literal("Unavailable", "Failed"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** More bytes arrived than the object may hold; nothing was stored. */
export class ObjectTooLarge extends Schema.TaggedError<ObjectTooLarge>()("ObjectTooLarge", {
  limit: Schema.Number
}) {}

/** What the store knows of an object. */
export interface ObjectInfo {
  readonly key: string
  readonly size: number
}

/** An inclusive byte range. */
export interface ByteRange {
  readonly start: number
  readonly end: number
}

export class ObjectStore extends Context.Tag("@hosting/core/ObjectStore")<ObjectStore, {
  /**
   * Stores an object from a byte stream, replacing any object of that key.
   * Atomic: a reader sees the old object or the whole new one. More than
   * `maxBytes` fails with ObjectTooLarge and stores nothing.
   */
  readonly put: <E>(
    key: string,
    body: Stream.Stream<Uint8Array, E>,
    options: { readonly contentType: string; readonly maxBytes: number }
  ) => Effect.Effect<ObjectInfo, ObjectStoreError | ObjectTooLarge | E>
  readonly head: (key: string) => Effect.Effect<Option.Option<ObjectInfo>, ObjectStoreError>
  /** The bytes of an object (or of a range of it), streamed; None when there is no such object. */
  readonly get: (
    key: string,
    range?: ByteRange
  ) => Effect.Effect<Option.Option<Stream.Stream<Uint8Array, ObjectStoreError>>, ObjectStoreError>
  /**
   * Copies an object to another key, replacing any object there; None when
   * `from` does not exist. Atomic for readers of `to` (the old object or the
   * whole copy), and the copy stays as it is when `from` is written again.
   */
  readonly copy: (from: string, to: string) => Effect.Effect<Option.Option<ObjectInfo>, ObjectStoreError>
  /** Deleting a missing object is not an error. */
  readonly delete: (key: string) => Effect.Effect<void, ObjectStoreError>
  /** A URL that reads the object for a short while, when the store can make one (S3); None otherwise. */
  readonly presignGet: (
    key: string,
    options: { readonly expiresIn: Duration.Duration; readonly contentType: string; readonly contentDisposition: string }
  ) => Effect.Effect<Option.Option<string>, ObjectStoreError>
  /** A URL that writes the object for a short while, with the content type locked in; None when the store cannot. */
  readonly presignPut: (
    key: string,
    options: { readonly expiresIn: Duration.Duration; readonly contentType: string; readonly size: number }
  ) => Effect.Effect<Option.Option<string>, ObjectStoreError>
}>() {}
