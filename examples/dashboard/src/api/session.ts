/**
 * The browser session: a token (a platform token, or the access token of a
 * device login) is exchanged once for an HttpOnly cookie, which then
 * authenticates every call; the token itself is never kept by the page.
 * Calls that change something also carry the session's CSRF value.
 *
 * `POST /session` `{ token }`, `GET /session` and `DELETE /session` are
 * called with `fetch` directly, so this module does not depend on the
 * typed client knowing these routes.
 */
import { deviceCodeGrant } from "@hosting/api/OAuthApi"
import { baseUrl, call, csrf, Problem, setCsrf } from "./runtime"

/** Who is signed in. */
export interface Session {
  readonly user: { readonly id: string; readonly name: string }
  readonly csrf: string
  readonly expires_in?: number | undefined
}

const isSession = (body: unknown): body is Session => {
  if (typeof body !== "object" || body === null) return false
  const { user, csrf } = body as Record<string, unknown>
  return typeof csrf === "string" && typeof user === "object" && user !== null &&
    typeof (user as Record<string, unknown>)["id"] === "string"
}

/** The `Problem` of an error answer read with `fetch`: its `{ error, details }` when it has them. */
export const problemOf = async (response: Response): Promise<Problem> => {
  const text = await response.text().catch(() => "")
  let error = response.status >= 500 ? "server_error" : "unexpected_response"
  let details = text.trim() === "" ? `The server answered ${response.status}.` : text.trim().slice(0, 300)
  try {
    const body = JSON.parse(text) as Record<string, unknown>
    if (typeof body["error"] === "string") error = body["error"]
    if (typeof body["details"] === "string") details = body["details"]
  } catch {
    // not JSON: the text itself is the best description
  }
  return new Problem({ kind: "response", status: response.status, error, details })
}

const sessionUrl = `${baseUrl}/session`

const networkProblem = (error: unknown) =>
  new Problem({
    kind: "network",
    status: undefined,
    error: "network_error",
    details: `The server could not be reached (${error instanceof Error ? error.message : String(error)}).`
  })

const sessionCall = async (init: RequestInit): Promise<Response> => {
  try {
    return await fetch(sessionUrl, { credentials: "same-origin", cache: "no-store", ...init })
  } catch (error) {
    throw networkProblem(error)
  }
}

const accept = async (response: Response): Promise<Session> => {
  if (!response.ok) throw await problemOf(response)
  const body: unknown = await response.json()
  if (!isSession(body)) {
    throw new Problem({ kind: "invalid", status: response.status, error: "invalid_answer", details: "The session answer could not be read." })
  }
  setCsrf(body.csrf)
  return body
}

/** Exchanges a token for a session cookie. A wrong token fails with the 401's `Problem`. */
export const signIn = async (token: string): Promise<Session> =>
  accept(
    await sessionCall({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: token.trim() })
    })
  )

/** The current session from its cookie, or `undefined` when there is none (401). */
export const current = async (): Promise<Session | undefined> => {
  const response = await sessionCall({ method: "GET" })
  if (response.status === 401) {
    setCsrf(undefined)
    return undefined
  }
  return accept(response)
}

/** Ends the session on the server (the cookie is cleared there); forgets the CSRF value here. */
export const signOut = async (): Promise<void> => {
  const value = csrf()
  const response = await sessionCall({ method: "DELETE", headers: value === undefined ? {} : { "x-csrf-token": value } })
  setCsrf(undefined)
  if (!response.ok && response.status !== 401) throw await problemOf(response)
}

/** The client id the dashboard's device logins carry (shown on the approval page). */
export const clientId = "hosting-dashboard"

/** A device login under way. */
export interface DeviceLogin {
  readonly userCode: string
  readonly verificationUri: string
  readonly verificationUriComplete: string
  readonly expiresAt: number
  /** Seconds between polls. */
  readonly interval: number
  readonly deviceCode: string
}

/** Starts a device login: the code to approve, and where. */
export const startDeviceLogin = async (): Promise<DeviceLogin> => {
  const started = await call((client) => client.oauth.deviceCode({ payload: { client_id: clientId } }))
  return {
    userCode: started.user_code,
    verificationUri: started.verification_uri,
    verificationUriComplete: started.verification_uri_complete,
    expiresAt: Date.now() + started.expires_in * 1000,
    interval: started.interval,
    deviceCode: started.device_code
  }
}

/** One poll's outcome: the token, "wait" (with the interval to use next), or a final refusal. */
export type Poll =
  | { readonly _tag: "Token"; readonly accessToken: string }
  | { readonly _tag: "Wait"; readonly interval: number }

/** Polls once for the token of a device login (RFC 8628 section 3.5). Fails with the final refusal. */
export const pollDeviceLogin = async (login: DeviceLogin, interval: number, signal?: AbortSignal): Promise<Poll> => {
  try {
    const token = await call(
      (client) =>
        client.oauth.token({ payload: { grant_type: deviceCodeGrant, device_code: login.deviceCode, client_id: clientId } }),
      signal
    )
    return { _tag: "Token", accessToken: token.access_token }
  } catch (error) {
    if (error instanceof Problem) {
      if (error.code === "authorization_pending") return { _tag: "Wait", interval }
      if (error.code === "slow_down") return { _tag: "Wait", interval: interval + 5 }
    }
    throw error
  }
}
