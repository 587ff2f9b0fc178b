/**
 * The exit codes of `hosting`, which scripts can rely on, and how a failure
 * becomes one.
 */
import { ClientError } from "@hosting/client"
import { Schema } from "effect"

/** Done. */
export const ok = 0
/** A usage or validation error: bad arguments, a refused request (400), a local file that cannot be read. */
export const usage = 1
/** Not signed in, or the token is no longer valid (401); a device login that expired or was denied. */
export const notSignedIn = 2
/** Signed in, but not allowed (403). */
export const forbidden = 3
/** Not found (404). */
export const notFound = 4
/** A conflict or a limit (409, 413): a conversation at its message limit, a file larger than reserved. */
export const conflict = 5
/** The server failed or is unavailable (5xx), or answered something unreadable. */
export const server = 6
/** The server could not be reached, or the connection broke. */
export const network = 7
/** Stopped by Ctrl-C (128 + SIGINT), except where stopping is the normal end (`events follow`). */
export const interrupted = 130

/** The exit code of an HTTP error status. */
export const ofStatus = (status: number): number => {
  if (status === 401) return notSignedIn
  if (status === 403) return forbidden
  if (status === 404 || status === 410) return notFound
  if (status === 409 || status === 413) return conflict
  if (status >= 500 || status === 429) return server
  return usage
}

/** The exit code of a client problem. */
export const ofProblem = (problem: ClientError.Problem): number => {
  if (problem.kind === "network") return network
  if (problem.kind === "response") return problem.status === undefined ? server : ofStatus(problem.status)
  // Inputs are validated before any request; what remains unreadable is the server's answer.
  return problem.error === "invalid_request" ? usage : server
}

/**
 * A failure of the CLI itself, with the code to exit with; printed as
 * `error: <details> (<error>)`, then `hint: <hint>` when there is one.
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  exitCode: Schema.Number,
  error: Schema.String,
  details: Schema.String,
  hint: Schema.optional(Schema.String)
}) {
  override get message() {
    return this.details
  }
}

/** A usage error (exit 1). */
export const usageError = (details: string, error = "invalid_usage", hint?: string) =>
  new CliFailure({ exitCode: usage, error, details, ...(hint === undefined ? {} : { hint }) })
