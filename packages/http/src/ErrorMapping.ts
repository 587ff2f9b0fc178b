/**
 * The one place where domain errors become HTTP answers. Handlers pass every
 * use-case failure through `fromDomain`; nothing else picks a status.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiErrors } from "@hosting/api"
import { type Errors, Steps } from "@hosting/core"
import { Effect } from "effect"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** Body details of every 500: never the cause, which goes to the log. */
export const internalDetails = "The server failed to handle the request. It has been logged; try again later."

/** Body details of a storage failure: never the operation, the SQL or the driver's message. */
export const storageDetails = "The database is not reachable or failed; try again shortly."

/** Seconds a client should wait before retrying after a storage failure. */
export const storageRetryAfterSeconds = 5

/** The error body of a storage failure (503 `storage_unavailable`). */
export const storageUnavailable = new ApiErrors.ServiceUnavailable({ error: "storage_unavailable", details: storageDetails })

/** The whole answer to a storage failure: the 503 body with `Retry-After`. */
export const storageUnavailableResponse = (): HttpServerResponse.HttpServerResponse =>
  JsonAnswer.json(
    { error: storageUnavailable.error, details: storageUnavailable.details },
    { status: 503, headers: { "retry-after": String(storageRetryAfterSeconds) } }
  )

/** Which API error each domain error becomes (the status table, at the type level). */
export interface ApiErrorByTag {
  readonly InvalidRequest: ApiErrors.BadRequest
  readonly SpecInvalid: ApiErrors.BadRequest
  readonly VersionAlreadyPublished: ApiErrors.BadRequest
  readonly BuildAlreadyPublished: ApiErrors.BadRequest
  readonly AccountNameTaken: ApiErrors.BadRequest
  readonly AccountExists: ApiErrors.Conflict
  readonly UserNotFound: ApiErrors.NotFound
  readonly MemberNotFound: ApiErrors.NotFound
  readonly LastOwner: ApiErrors.Conflict
  readonly SetupCodeInvalid: ApiErrors.Forbidden
  readonly SetupDone: ApiErrors.Conflict
  readonly TokenNotFound: ApiErrors.NotFound
  readonly InvitationNotFound: ApiErrors.NotFound
  readonly AlreadyMember: ApiErrors.Conflict
  readonly AccountBusy: ApiErrors.Conflict
  readonly Unauthenticated: ApiErrors.Unauthorized
  readonly PermissionDenied: ApiErrors.Forbidden
  readonly AccountNotFound: ApiErrors.NotFound
  readonly AgentNotFound: ApiErrors.NotFound
  readonly TraceNotFound: ApiErrors.NotFound
  readonly BuildNotFound: ApiErrors.NotFound
  readonly VersionNotFound: ApiErrors.NotFound
  readonly NoMatchingVersion: ApiErrors.NotFound
  readonly ChannelNotFound: ApiErrors.NotFound
  readonly VersionYanked: ApiErrors.Conflict
  readonly DeploymentNotFound: ApiErrors.NotFound
  readonly NothingToRollBack: ApiErrors.Conflict
  readonly SecretNotFound: ApiErrors.NotFound
  readonly SecretsMissing: ApiErrors.Conflict
  readonly ConfigMapNotFound: ApiErrors.NotFound
  readonly PodNotFound: ApiErrors.NotFound
  readonly ClusterError: ApiErrors.ServiceUnavailable | ApiErrors.Conflict | ApiErrors.InternalError
  readonly ConversationNotFound: ApiErrors.NotFound
  readonly FileNotFound: ApiErrors.NotFound
  readonly AttachmentInvalid: ApiErrors.BadRequest
  readonly FileTooLarge: ApiErrors.PayloadTooLarge
  readonly UploadIncomplete: ApiErrors.BadRequest
  readonly UploadExpired: ApiErrors.BadRequest
  readonly FileComplete: ApiErrors.Conflict
  readonly FilesUnavailable: ApiErrors.ServiceUnavailable
  readonly TracesUnavailable: ApiErrors.ServiceUnavailable
  readonly DeviceFlowError: ApiErrors.OAuthError
  readonly MessageLimitReached: ApiErrors.Conflict
  readonly ReplyInProgress: ApiErrors.Conflict
  readonly TooManyAttachments: ApiErrors.PayloadTooLarge
  readonly StorageError: ApiErrors.ServiceUnavailable
}

/** The API error a given domain error becomes. */
export type ApiErrorOf<E> = E extends { readonly _tag: infer Tag extends keyof ApiErrorByTag } ? ApiErrorByTag[Tag] : never

/** The API error for a domain error (the status table, at run time). */
export const fromDomain = <E extends Errors.DomainError>(error: E): ApiErrorOf<E> => toApiError(error) as ApiErrorOf<E>

const toApiError = (error: Errors.DomainError): ApiErrors.ApiError => {
  switch (error._tag) {
    case "InvalidRequest":
    case "SpecInvalid":
    case "VersionAlreadyPublished":
    case "BuildAlreadyPublished":
    case "AccountNameTaken":
    case "AttachmentInvalid":
    case "UploadIncomplete":
    case "UploadExpired":
      return new ApiErrors.BadRequest({ error: error.code, details: error.message })
    case "Unauthenticated":
      return new ApiErrors.Unauthorized({ error: error.code, details: error.message })
    case "PermissionDenied":
    case "SetupCodeInvalid":
      return new ApiErrors.Forbidden({ error: error.code, details: error.message })
    case "AccountNotFound":
    case "UserNotFound":
    case "MemberNotFound":
    case "TokenNotFound":
    case "InvitationNotFound":
    case "AgentNotFound":
    case "TraceNotFound":
    case "BuildNotFound":
    case "VersionNotFound":
    case "NoMatchingVersion":
    case "ChannelNotFound":
    case "DeploymentNotFound":
    case "ConfigMapNotFound":
    case "PodNotFound":
    case "SecretNotFound":
    case "ConversationNotFound":
    case "FileNotFound":
      return new ApiErrors.NotFound({ error: error.code, details: error.message })
    case "DeviceFlowError":
      return new ApiErrors.OAuthError({ error: error.code, details: error.details, error_description: error.details })
    case "MessageLimitReached":
    case "ReplyInProgress":
    case "NothingToRollBack":
    case "VersionYanked":
    case "SecretsMissing":
    case "FileComplete":
    case "AccountExists":
    case "LastOwner":
    case "SetupDone":
    case "AlreadyMember":
    case "AccountBusy":
      return new ApiErrors.Conflict({ error: error.code, details: error.message, code: error.code })
    case "TooManyAttachments":
    case "FileTooLarge":
      return new ApiErrors.PayloadTooLarge({ error: error.code, details: error.message })
    case "FilesUnavailable":
    case "TracesUnavailable":
      return new ApiErrors.ServiceUnavailable({ error: error.code, details: error.message })
    case "ClusterError":
      // The cluster's message is safe by the port's contract; its cause goes to the log only.
      // A conflict (a namespace the platform did not make) is the caller's to resolve: 409, not a failure of ours.
      return error.reason === "Unavailable"
        ? new ApiErrors.ServiceUnavailable({ error: "cluster_unavailable", details: error.message })
        : error.reason === "Conflict"
        ? new ApiErrors.Conflict({ error: "cluster_conflict", details: error.message, code: "cluster_conflict" })
        : new ApiErrors.InternalError({ error: "cluster_error", details: error.message })
    case "StorageError":
      return storageUnavailable
  }
}

/** The domain errors of `E` that a handler answers itself: all but storage failures. */
export type WithoutStorage<E> = Exclude<E, Extract<E, Errors.StorageError>>

/**
 * Runs a use case for a handler: domain failures become API errors. A storage
 * failure is logged with its cause and answered 503 `storage_unavailable`
 * with `Retry-After` (the database is down, full or locked: the request may
 * succeed later). It leaves as a defect carrying that answer, which the error
 * middleware sends as it is, because the routes do not all declare a 503.
 */
export const handle = <A, E extends Errors.DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiErrorOf<WithoutStorage<E>>, R> =>
  // On the failure side only: a use case that succeeds passes it without a step (Steps.catchFailure).
  Steps.catchFailure(effect, (error): Effect.Effect<never, ApiErrors.ApiError> =>
    error._tag === "StorageError"
      ? Effect.zipRight(
        Effect.logError("storage failure", (error as Errors.StorageError).operation, (error as Errors.StorageError).cause),
        Effect.die(storageUnavailableResponse())
      )
      : error._tag === "ClusterError"
      ? Effect.zipRight(
        Effect.logError("cluster failure", error.message, (error as { cause?: unknown }).cause),
        Effect.fail(fromDomain(error))
      )
      : Effect.fail(fromDomain(error))) as unknown as Effect.Effect<A, ApiErrorOf<WithoutStorage<E>>, R>
