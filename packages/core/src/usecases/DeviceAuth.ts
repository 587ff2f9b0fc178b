/**
 * Sign-in of command-line clients with the OAuth 2.0 device authorization
 * grant (RFC 8628): a client asks for a code, the user approves it on the
 * approval page while signed in, the client polls for its access token.
 * Also the page's browser session and token revocation (RFC 7009).
 * Device codes, access tokens and session tokens are stored only as hashes.
 */
import { Context, DateTime, Duration, Effect, Option } from "effect"
import { DeviceFlowError, InvalidRequest } from "../model/Errors.js"
import { hashToken, Identity } from "./Identity.js"
import { DeviceCodeStore, TokenStore } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Token from "../model/Token.js"
import * as Tracing from "../runtime/Tracing.js"

/** The grant type of RFC 8628 device access token requests. */
export const deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

/** Settings of device logins. */
export class DeviceAuthConfig extends Context.Reference<DeviceAuthConfig>()("@hosting/core/DeviceAuthConfig", {
  defaultValue: () => ({
    /** How long a user has to approve a code. */
    codeLifetime: Duration.minutes(10) as Duration.Duration,
    /** Seconds a client waits between polls (RFC 8628 `interval`). */
    interval: 5,
    /** How long an access token issued by a device login stays valid. */
    tokenLifetime: Duration.days(30) as Duration.Duration,
    /** How long a sign-in on the approval page lasts. */
    sessionLifetime: Duration.hours(12) as Duration.Duration
  })
}) {}

/** Letters that cannot be mistaken for each other or for digits (RFC 8628 section 6.1), no vowels. */
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

/** A secret of 256 random bits, URL-safe. */
export const randomSecret = (): string => base64url(globalThis.crypto.getRandomValues(new Uint8Array(32)))

/** `XXXX-XXXX` from the alphabet above: about 34 bits, plenty for a code that lives ten minutes. */
const randomUserCode = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8))
  const chars = Array.from(bytes, (b) => userCodeAlphabet[b % userCodeAlphabet.length]!)
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`
}

/** What users type, as stored: upper case, the hyphen where it belongs, other separators dropped. */
export const normalizeUserCode = (input: string): string => {
  const letters = input.toUpperCase().replace(/[^A-Z]/g, "")
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : letters
}

/** What the approval page shows of a code. */
export interface CodeView {
  readonly user_code: string
  readonly client_id: string
  /** The scopes asked for, space-separated ("": every scope of the approving sign-in). */
  readonly scope: string
  readonly state: "pending" | "approved" | "denied" | "expired"
}

const seconds = (d: Duration.Duration) => Math.round(Duration.toSeconds(d))

/** The scopes of an OAuth `scope` parameter: space-separated (RFC 6749 section 3.3). */
const scopesOf = (scope: string): ReadonlyArray<string> => scope.split(" ").filter((s) => s !== "")

export class DeviceAuth extends Effect.Service<DeviceAuth>()("@hosting/core/DeviceAuth", {
  effect: Effect.gen(function*() {
    const codes = yield* DeviceCodeStore
    const tokens = yield* TokenStore
    const identity = yield* Identity
    const config = yield* DeviceAuthConfig

    const flowError = (code: DeviceFlowError["code"], details: string) => new DeviceFlowError({ code, details })

    /** Starts a device login: the codes the client shows and polls with. */
    const start = Tracing.fn("DeviceAuth.start")(function*(clientId: string, scope: string) {
      const unknown = scopesOf(scope).filter((s) => !Token.allScopes.includes(s as Token.Scope))
      if (unknown.length > 0) {
        return yield* flowError(
          "invalid_scope",
          `Unknown scope ${unknown.join(", ")}: scopes are ${Token.allScopes.join(", ")}, separated by spaces.`
        )
      }
      const now = yield* DateTime.now
      const deviceCode = randomSecret()
      const userCode = randomUserCode()
      yield* codes.pruneExpired(now)
      yield* codes.insert({
        device_hash: yield* hashToken(deviceCode),
        user_code: userCode,
        client_id: clientId,
        scope,
        status: "pending",
        user_id: Option.none(),
        decided_by: Option.none(),
        interval: config.interval,
        last_polled_at: Option.none(),
        expires_at: DateTime.addDuration(now, config.codeLifetime),
        created_at: now
      })
      return { device_code: deviceCode, user_code: userCode, expires_in: seconds(config.codeLifetime), interval: config.interval }
    })

    /** Issues an access token for a user, made from the credential of hash `parentHash`; only its hash is kept. */
    const issueToken = Effect.fnUntraced(function*(
      principalUser: Principal["user"]["id"],
      lifetime: Duration.Duration,
      parentHash: Option.Option<string>,
      scope = ""
    ) {
      const token = randomSecret()
      const now = yield* DateTime.now
      const limits = yield* limitsFor(parentHash, scope)
      yield* identity.issue(principalUser, token, Option.some(DateTime.addDuration(now, lifetime)), parentHash, limits)
      return { token, scopes: limits === undefined ? undefined : Option.getOrUndefined(limits.scopes) }
    })

    /**
     * The limits of a token asked for with `scope` (space-separated) and made
     * from the credential of `parentHash`: the scopes asked for, within the
     * parent's; the parent's accounts. Nothing asked for: the parent's limits.
     */
    const limitsFor = Effect.fnUntraced(function*(parentHash: Option.Option<string>, scope: string) {
      const asked = Token.allScopes.filter((s) => scopesOf(scope).includes(s))
      if (asked.length === 0) return undefined
      const parent = Option.isNone(parentHash) ? Option.none() : yield* tokens.findPrincipal(parentHash.value)
      const parentLimits = Option.map(parent, (found) => found.limits)
      const within = Option.match(Option.flatMap(parentLimits, (limits) => limits.scopes), {
        onNone: () => asked,
        onSome: (allowed) => asked.filter((s) => allowed.includes(s))
      })
      return {
        scopes: Option.some(within),
        accounts: Option.flatMap(parentLimits, (limits) => limits.accounts)
      }
    })

    /**
     * The device access token request (RFC 8628 section 3.4): a token once the
     * user approved, otherwise the error the client acts on.
     */
    const poll = Tracing.fn("DeviceAuth.poll")(function*(grantType: string, deviceCode: string | undefined) {
      if (grantType !== deviceCodeGrant) {
        return yield* flowError("unsupported_grant_type", `grant_type must be ${deviceCodeGrant}.`)
      }
      if (deviceCode === undefined || deviceCode === "") return yield* flowError("invalid_request", "device_code is required.")
      const hash = yield* hashToken(deviceCode)
      const found = yield* codes.findByDeviceHash(hash)
      if (Option.isNone(found)) {
        return yield* flowError("invalid_grant", "This device code is unknown or was already used; start the login again.")
      }
      const code = found.value
      const now = yield* DateTime.now
      if (DateTime.lessThanOrEqualTo(code.expires_at, now)) {
        yield* codes.remove(hash)
        return yield* flowError("expired_token", "The code expired before it was approved; start the login again.")
      }
      if (code.status === "denied") {
        yield* codes.remove(hash)
        return yield* flowError("access_denied", "The login was denied on the approval page.")
      }
      const early = Option.exists(
        code.last_polled_at,
        (last) => DateTime.toEpochMillis(now) - DateTime.toEpochMillis(last) < code.interval * 1000
      )
      if (code.status === "pending") {
        const interval = early ? code.interval + 5 : code.interval
        yield* codes.recordPoll(hash, now, interval)
        return yield* early
          ? flowError("slow_down", `Polling too fast: wait ${interval} seconds between requests.`)
          : flowError("authorization_pending", "The code has not been approved yet.")
      }
      // Approved: the first poll to take the code gets the token.
      if (!(yield* codes.remove(hash)) || Option.isNone(code.user_id)) {
        return yield* flowError("invalid_grant", "This device code was already used; start the login again.")
      }
      // Made from the session that approved it: signing that session out, or revoking what it was made from, ends it too.
      const issued = yield* issueToken(code.user_id.value, config.tokenLifetime, code.decided_by, code.scope).pipe(
        Effect.catchTag("Unauthenticated", () =>
          flowError("invalid_grant", "The sign-in that approved this login has ended; start the login again."))
      )
      // The scopes granted: those asked for, within the approving sign-in's (RFC 6749 section 5.1).
      return {
        access_token: issued.token,
        token_type: "Bearer" as const,
        expires_in: seconds(config.tokenLifetime),
        ...(issued.scopes === undefined ? {} : { scope: issued.scopes.join(" ") })
      }
    })

    /** A code as the approval page shows it; None when there is no such code. */
    const describe = Tracing.fn("DeviceAuth.describe")(function*(userCode: string) {
      const found = yield* codes.findByUserCode(normalizeUserCode(userCode))
      if (Option.isNone(found)) return Option.none<CodeView>()
      const now = yield* DateTime.now
      const code = found.value
      const view: CodeView = {
        user_code: code.user_code,
        client_id: code.client_id,
        scope: code.scope,
        state: code.status === "pending" && DateTime.lessThanOrEqualTo(code.expires_at, now) ? "expired" : code.status
      }
      return Option.some(view)
    })

    /** The signed-in user approves or denies a pending code with their session (`credential`, in clear). */
    const decide = Tracing.fn("DeviceAuth.decide")(function*(
      principal: Principal,
      credential: string,
      userCode: string,
      decision: "approve" | "deny"
    ) {
      const view = yield* describe(userCode)
      if (Option.isNone(view)) {
        return yield* new InvalidRequest({ details: "user_code: no login is waiting for this code; check it, or start the login again." })
      }
      if (view.value.state !== "pending") {
        return yield* new InvalidRequest({ details: `user_code: this login is ${view.value.state}; start the login again if needed.` })
      }
      const changed = yield* codes.decide(
        view.value.user_code,
        decision === "approve" ? "approved" : "denied",
        principal.user.id,
        yield* hashToken(credential)
      )
      if (!changed) return yield* new InvalidRequest({ details: "user_code: this login was decided already." })
      return { ...view.value, state: decision === "approve" ? "approved" as const : "denied" as const }
    })

    /**
     * Signs in on the approval page (or the dashboard) with a platform token:
     * a new session token for the same user, made from that token, so that
     * revoking the token ends the session.
     */
    const signIn = Tracing.fn("DeviceAuth.signIn")(function*(platformToken: string) {
      const principal = yield* identity.authenticate(platformToken)
      // Made from the token: as limited as it is.
      const { token: session } = yield* issueToken(principal.user.id, config.sessionLifetime, Option.some(yield* hashToken(platformToken)))
      return { session, principal, expires_in: seconds(config.sessionLifetime) }
    })

    /**
     * Starts a browser session for a user who proved who they are elsewhere
     * (single sign-on): a session token of its own, with no parent.
     */
    const sessionFor = Tracing.fn("DeviceAuth.sessionFor")(function*(userId: Principal["user"]["id"]) {
      const { token: session } = yield* issueToken(userId, config.sessionLifetime, Option.none())
      const principal = yield* identity.authenticate(session)
      return { session, principal, expires_in: seconds(config.sessionLifetime) }
    })

    /**
     * Revokes a token (RFC 7009), and every session and token made from it,
     * transitively: the answer is the same whether or not it existed.
     */
    const revoke = Tracing.fn("DeviceAuth.revoke")(function*(token: string) {
      if (token === "" || token.length > 4096) return
      yield* tokens.remove(yield* hashToken(token))
    })

    return { start, poll, describe, decide, signIn, revoke, sessionFor } as const
  })
}) {}
