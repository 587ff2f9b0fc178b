/**
 * `hosting login` and `hosting logout`: the OAuth 2.0 device flow (RFC 8628)
 * and token revocation (RFC 7009). Login never opens a browser: it prints
 * the address and the code, which works the same on a laptop and over SSH.
 */
import { Command, Options } from "@effect/cli"
import { OAuthApi } from "@hosting/api"
import { HostingClient } from "@hosting/client"
import { Token } from "@hosting/core"
import { Clock, Duration, Effect, Either } from "effect"
import { CliFailure, notSignedIn } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Profiles from "./Profiles.js"
import * as Session from "./Session.js"

/** The client id this CLI signs in as. */
export const clientId = "hosting-cli"

/** RFC 8628 section 3.5: a client told to slow down adds 5 seconds to its interval. */
const slowDownStep = 5

const stopped = (error: string, details: string) => new CliFailure({ exitCode: notSignedIn, error, details })

/** Polls the token endpoint until the login is approved, denied or expired. */
const poll = (
  client: HostingClient.Client,
  code: typeof OAuthApi.DeviceCodeResponse.Type
) =>
  Effect.gen(function*() {
    let interval = Math.max(1, code.interval)
    const deadline = (yield* Clock.currentTimeMillis) + code.expires_in * 1000
    // Bounded: no more polls than fit before the code expires.
    const maxPolls = Math.ceil(code.expires_in / interval) + 1
    for (let poll = 0; poll < maxPolls && (yield* Clock.currentTimeMillis) < deadline; poll++) {
      yield* Effect.sleep(Duration.seconds(interval))
      const answer = yield* Effect.either(client.oauth.token({
        payload: { grant_type: OAuthApi.deviceCodeGrant, device_code: code.device_code, client_id: clientId }
      }))
      if (Either.isRight(answer)) return answer.right
      const error = answer.left
      if (error._tag !== "OAuthError") return yield* Effect.fail(error)
      switch (error.error) {
        case "authorization_pending":
          continue
        case "slow_down":
          interval += slowDownStep
          continue
        case "expired_token":
          return yield* stopped("expired_token", "The code expired before it was approved. Run `hosting login` again.")
        case "access_denied":
          return yield* stopped("access_denied", "The sign-in was denied on the approval page.")
        default:
          return yield* Effect.fail(error)
      }
    }
    return yield* stopped("expired_token", "The code expired before it was approved. Run `hosting login` again.")
  })

export const login = Command.make("login", {
  scopes: Options.choice("scope", Token.allScopes).pipe(
    Options.withDescription("Limit the token to a scope; repeatable: read, chat, publish, deploy, admin (default: all you may do)"),
    Options.repeated
  )
}, ({ scopes }) =>
  Effect.gen(function*() {
    const session = yield* Session.creating
    // The device flow needs no token; an old one is not sent along.
    const anonymous = yield* HostingClient.make({ baseUrl: session.baseUrl })
    const code = yield* anonymous.oauth.deviceCode({
      payload: { client_id: clientId, ...(scopes.length === 0 ? {} : { scope: scopes.join(" ") }) }
    })
    yield* Output.note([
      `To sign in to ${session.baseUrl}, open this page in a browser:`,
      ``,
      `    ${code.verification_uri}`,
      ``,
      `and enter the code:`,
      ``,
      `    ${code.user_code}`,
      ``,
      `(or open ${code.verification_uri_complete})`,
      `Waiting for approval...`
    ].join("\n"))
    const token = yield* poll(anonymous, code)
    yield* Profiles.update(session.profile, (profile) => ({ ...profile, base_url: session.baseUrl, token: token.access_token }))
    const signedIn = yield* HostingClient.make({ baseUrl: session.baseUrl, token: token.access_token })
    const me = yield* Effect.option(signedIn.accounts.me())
    if (session.json) {
      return yield* Output.json({
        profile: session.profile,
        base_url: session.baseUrl,
        expires_in: token.expires_in,
        user: me._tag === "Some" ? me.value.user : null,
        accounts: me._tag === "Some" ? me.value.accounts : []
      })
    }
    const who = me._tag === "Some" ? ` as ${me.value.user.name} (${me.value.user.id})` : ""
    yield* Output.line(`Signed in to ${session.baseUrl}${who}; saved in profile "${session.profile}".`)
  })).pipe(Command.withDescription("Sign in with the device flow and keep the token in the profile"))

export const logout = Command.make("logout", {}, () =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const file = yield* Profiles.load
    const stored = file.profiles[session.profile]
    if (stored?.token === undefined) {
      if (session.json) return yield* Output.json({ profile: session.profile, revoked: false })
      return yield* Output.line(`Not signed in (profile "${session.profile}").`)
    }
    // The token is revoked where it was issued: the profile's own server.
    const baseUrl = stored.base_url ?? session.baseUrl
    const client = yield* HostingClient.make({ baseUrl })
    // Kept on a failure, so that the logout can be retried rather than leave a live token behind unknown.
    yield* client.oauth.revoke({ payload: { token: stored.token, token_type_hint: "access_token", client_id: clientId } })
    yield* Profiles.update(session.profile, (profile) => {
      if (profile === undefined) return undefined
      const { token: _token, ...rest } = profile
      return rest
    })
    if (session.json) return yield* Output.json({ profile: session.profile, revoked: true })
    yield* Output.line(`Signed out of ${baseUrl}; the token is revoked and removed from profile "${session.profile}".`)
  })).pipe(Command.withDescription("Revoke the profile's token and remove it from the profile"))
