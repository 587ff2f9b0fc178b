/**
 * The one place where domain errors become HTTP answers. Handlers pass every
 * use-case failure through `fromDomain`; nothing else picks a status.
 */
import { ApiErrors } from "@hosting/api"
import type { Errors } from "@hosting/core"
import { Effect } from "effect"

/** Body details of every 500: never the cause, which goes to the log. */
export const internalDetails = "The server failed to handle the request. It has been logged; try again later."

/** Which API error each domain error becomes (the status table, at the type level). */
export interface ApiErrorByTag {
  readonly InvalidRequest: ApiErrors.BadRequest
  readonly SpecInvalid: ApiErrors.BadRequest
  readonly VersionAlreadyPublished: ApiErrors.BadRequest
  readonly BuildAlreadyPublished: ApiErrors.BadRequest
  readonly AccountNameTaken: ApiErrors.BadRequest
  readonly Unauthenticated: ApiErrors.Unauthorized
  readonly PermissionDenied: ApiErrors.Forbidden
  readonly AccountNotFound: ApiErrors.NotFound
  readonly AgentNotFound: ApiErrors.NotFound
  readonly BuildNotFound: ApiErrors.NotFound
  readonly VersionNotFound: ApiErrors.NotFound
  readonly DeploymentNotFound: ApiErrors.NotFound
  readonly ConfigMapNotFound: ApiErrors.NotFound
  readonly PodNotFound: ApiErrors.NotFound
  readonly ClusterError: ApiErrors.ServiceUnavailable | ApiErrors.InternalError
  readonly ConversationNotFound: ApiErrors.NotFound
  readonly FileNotFound: ApiErrors.NotFound
  readonly AttachmentInvalid: ApiErrors.BadRequest
  readonly FileTooLarge: ApiErrors.PayloadTooLarge
  readonly UploadIncomplete: ApiErrors.BadRequest
  readonly FilesUnavailable: ApiErrors.ServiceUnavailable
  readonly TracesUnavailable: ApiErrors.ServiceUnavailable
  readonly DeviceFlowError: ApiErrors.OAuthError
  readonly MessageLimitReached: ApiErrors.Conflict
  readonly TooManyAttachments: ApiErrors.PayloadTooLarge
  readonly StorageError: ApiErrors.InternalError
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
      return new ApiErrors.BadRequest({ error: error.code, details: error.message })
    case "Unauthenticated":
      return new ApiErrors.Unauthorized({ error: error.code, details: error.message })
    case "PermissionDenied":
      return new ApiErrors.Forbidden({ error: error.code, details: error.message })
    case "AccountNotFound":
    case "AgentNotFound":
    case "BuildNotFound":
    case "VersionNotFound":
    case "DeploymentNotFound":
    case "ConfigMapNotFound":
    case "PodNotFound":
    case "ConversationNotFound":
    case "FileNotFound":
      return new ApiErrors.NotFound({ error: error.code, details: error.message })
    case "DeviceFlowError":
      return new ApiErrors.OAuthError({ error: error.code, details: error.details, error_description: error.details })
    case "MessageLimitReached":
      return new ApiErrors.Conflict({ error: error.code, details: error.message, code: error.code })
    case "TooManyAttachments":
    case "FileTooLarge":
      return new ApiErrors.PayloadTooLarge({ error: error.code, details: error.message })
    case "FilesUnavailable":
    case "TracesUnavailable":
      return new ApiErrors.ServiceUnavailable({ error: error.code, details: error.message })
    case "ClusterError":
      // The cluster's message is safe by the port's contract; its cause goes to the log only.
      return error.reason === "Unavailable"
        ? new ApiErrors.ServiceUnavailable({ error: "cluster_unavailable", details: error.message })
        : new ApiErrors.InternalError({ error: "cluster_error", details: error.message })
    case "StorageError":
      return new ApiErrors.InternalError({ error: "internal_error", details: internalDetails })
  }
}

/**
 * Runs a use case for a handler: domain failures become API errors; storage
 * failures are logged with their cause and answered as a bare 500.
 */
export const handle = <A, E extends Errors.DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiErrorOf<E>, R> =>
  effect.pipe(
    Effect.tapError((error) =>
      error._tag === "StorageError"
        ? Effect.logError("storage failure", (error as Errors.StorageError).operation, (error as Errors.StorageError).cause)
        : error._tag === "ClusterError"
        ? Effect.logError("cluster failure", error.message, (error as { cause?: unknown }).cause)
        : Effect.void
    ),
    Effect.mapError(fromDomain)
  )
