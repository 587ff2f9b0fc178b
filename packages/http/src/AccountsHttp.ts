/**
 * Handlers of the account routes.
 */
import { type AccountsApi, HostingApi } from "@hosting/api"
import { Accounts, Events, type Ids, Principal, Secrets } from "@hosting/core"
import { Effect, Option, Redacted } from "effect"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as ApiApp from "./ApiApp.js"
import * as PublicUrl from "./PublicUrl.js"
import { handle } from "./ErrorMapping.js"
import * as Sse from "./Sse.js"
import * as StreamLimits from "./StreamLimits.js"

/** The dashboard's page that accepts an invitation: the API's base without `/api/v1`, then `/invitations/{code}`. */
const acceptPage = (base: string, code: string) =>
  `${base.endsWith(HostingApi.basePath) ? base.slice(0, -HostingApi.basePath.length) : base}/invitations/${encodeURIComponent(code)}`

/** The path of a route under one account. */
interface AccountPath {
  readonly account: Ids.AccountName
}

/** The account handlers; invitation links point at the public URL (PublicUrl.ts). */
export const layerWith = (options: PublicUrl.PublicUrlOptions = {}) => ApiApp.group(HostingApi.HostingApi, "accounts", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const events = yield* Events.Events
    const secrets = yield* Secrets.Secrets
    const base = Effect.map(HttpServerRequest.HttpServerRequest, (request) => PublicUrl.baseOf(request, options))
    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const rename = Effect.fnUntraced(function*(path: AccountPath, payload: typeof AccountsApi.RenameRequest.Type) {
      const principal = yield* Principal.CurrentPrincipal
      const result = yield* handle(accounts.rename(principal, path.account, payload.name))
      return {
        message: result.previous === result.name
          ? `Account ${result.name} keeps its name`
          : `Account ${result.previous} renamed to ${result.name}`,
        name: result.name
      }
    })
    const invite = Effect.fnUntraced(function*(path: AccountPath, payload: typeof AccountsApi.InviteRequest.Type) {
      const principal = yield* Principal.CurrentPrincipal
      const made = yield* handle(accounts.invite(principal, path.account, payload))
      return { ...made, url: acceptPage(yield* base, made.code) }
    })
    return handlers
      .handle("me", () => Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.me(principal))))
      .handle("get", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.get(principal, path.account))))
      .handle("rename", ({ path, payload }) => rename(path, payload))
      .handle("remove", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.remove(principal, path.account))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.create(principal, payload.name))))
      .handle("members", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.members(principal, path.account))).pipe(
          Effect.map((members) => ({ members }))
        ))
      .handle("setMember", ({ path, payload }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) =>
          handle(accounts.setRole(principal, path.account, path.user, payload.role)))
      )
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) =>
          handle(accounts.removeMember(principal, path.account, path.user))).pipe(
          Effect.map((removed) => ({
            message: `${removed.user_id} (${removed.role}) is no longer a member of ${path.account}`,
            user_id: removed.user_id
          }))
        ))
      .handle("invite", ({ path, payload }) => invite(path, payload))
      .handle("invitations", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.invitations(principal, path.account))).pipe(
          Effect.map((invitations) => ({ invitations }))
        ))
      .handle("withdraw", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.withdraw(principal, path.account, path.invitationId))))
      .handle("accept", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.accept(principal, path.code))).pipe(
          Effect.map((joined) => ({ message: `You joined ${joined.account} as ${joined.role}.`, ...joined }))
        ))
      .handle("audit", ({ path, urlParams }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(accounts.auditLog(principal, path.account, urlParams))))
      .handle("secrets", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(secrets.list(principal, path.account))).pipe(
          Effect.map((list) => ({ secrets: list }))
        ))
      .handle("setSecret", ({ path, payload }) =>
        // Redacted from here on: no log, span or error of the use case can show the value.
        Effect.flatMap(Principal.CurrentPrincipal, (principal) =>
          handle(secrets.set(principal, path.account, path.secret, Redacted.make(payload.value)))))
      .handle("removeSecret", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(secrets.remove(principal, path.account, path.secret))).pipe(
          Effect.map(({ name }) => ({
            message: `Deleted the secret ${name} of ${path.account}; running deployments keep the value they were deployed with.`,
            name
          }))
        ))
      // Without a generator, which would be a new generator function for every stream (docs/decisions.md,
      // "Generator functions made once").
      .handle("events", ({ path, urlParams, headers }) =>
        StreamLimits.guard(Effect.flatMap(Principal.CurrentPrincipal, (principal) => {
          // The header wins: EventSource sends it on reconnect with the newest id it saw.
          const lastEventId = Option.fromNullable(headers["last-event-id"] ?? urlParams.last_event_id)
          return handle(Sse.pushed(Sse.eventFrames, (receiver) => events.follow(principal, path.account, lastEventId, receiver)))
        })))
  }))

export const layer = layerWith()
