/**
 * The error bodies of the API, one class per status. Every error answer has
 * the body `{ error, details }`: `error` a stable snake_case code, `details`
 * a sentence for people. Which domain error becomes which of these is
 * decided once, in @hosting/http.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

const body = {
  /** Stable machine-readable code, snake_case. */
  error: Schema.String,
  /** Human-readable explanation. */
  details: Schema.String
}

/** 400: the request body or parameters are invalid. */
export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(body, HttpApiSchema.annotations({ status: 400 })) {
  readonly _tag = "BadRequest"
}

/**
 * 400 of the OAuth endpoints: the RFC 6749 error body (`error`,
 * `error_description`) that OAuth clients read, with `details` repeating the
 * description like every error body of this API.
 */
export class OAuthError extends Schema.Class<OAuthError>("OAuthError")(
  { ...body, error_description: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {
  readonly _tag = "OAuthError"
}

/** 401: no credential, or an unknown or expired one. */
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(body, HttpApiSchema.annotations({ status: 401 })) {
  readonly _tag = "Unauthorized"
}

/** 403: the caller lacks the role the operation needs. */
export class Forbidden extends Schema.Class<Forbidden>("Forbidden")(body, HttpApiSchema.annotations({ status: 403 })) {
  readonly _tag = "Forbidden"
}

/** 404: no such resource, or not one the caller may see. */
export class NotFound extends Schema.Class<NotFound>("NotFound")(body, HttpApiSchema.annotations({ status: 404 })) {
  readonly _tag = "NotFound"
}

/** 405: the route does not answer this method; `Allow` names those it answers. */
export class MethodNotAllowed extends Schema.Class<MethodNotAllowed>("MethodNotAllowed")(
  body,
  HttpApiSchema.annotations({ status: 405 })
) {
  readonly _tag = "MethodNotAllowed"
}

/** 409: the resource is in a state that refuses the operation; `code` repeats `error`. */
export class Conflict extends Schema.Class<Conflict>("Conflict")(
  { ...body, code: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  readonly _tag = "Conflict"
}

/** 413: the request is larger than allowed. */
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(
  body,
  HttpApiSchema.annotations({ status: 413 })
) {
  readonly _tag = "PayloadTooLarge"
}

/** 415: the request body is in a format the route does not take. */
export class UnsupportedMediaType extends Schema.Class<UnsupportedMediaType>("UnsupportedMediaType")(
  body,
  HttpApiSchema.annotations({ status: 415 })
) {
  readonly _tag = "UnsupportedMediaType"
}

/**
 * 429: the caller sent too many requests (`rate_limited`) or holds too many
 * open streams (`too_many_streams`); `Retry-After` says when to try again.
 */
export class TooManyRequests extends Schema.Class<TooManyRequests>("TooManyRequests")(
  body,
  HttpApiSchema.annotations({ status: 429 })
) {
  readonly _tag = "TooManyRequests"
}

/** 500: something failed on the server; the details never show internals. */
export class InternalError extends Schema.Class<InternalError>("InternalError")(
  body,
  HttpApiSchema.annotations({ status: 500 })
) {
  readonly _tag = "InternalError"
}

/** 503: the feature is not configured or its backend is unavailable. */
export class ServiceUnavailable extends Schema.Class<ServiceUnavailable>("ServiceUnavailable")(
  body,
  HttpApiSchema.annotations({ status: 503 })
) {
  readonly _tag = "ServiceUnavailable"
}

/** Every error class of the API: the one list that code recognising API errors reads. */
export const classes = [
  BadRequest,
  OAuthError,
  Unauthorized,
  Forbidden,
  NotFound,
  MethodNotAllowed,
  Conflict,
  PayloadTooLarge,
  UnsupportedMediaType,
  TooManyRequests,
  InternalError,
  ServiceUnavailable
] as const

/** Any error body the API answers with. */
export type ApiError = InstanceType<typeof classes[number]>
