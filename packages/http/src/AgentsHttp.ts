/**
 * Handlers of the catalog routes.
 */
import { type AgentsApi, HostingApi } from "@hosting/api"
import { Catalog, Identity, type Ids, Principal, Releases } from "@hosting/core"
import { Effect, Option } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as Auth from "./Auth.js"
import { handle } from "./ErrorMapping.js"
import * as PublicAgentCache from "./PublicAgentCache.js"

/** The path of a route under one agent. */
interface AgentPath {
  readonly account: Ids.AccountName
  readonly name: Ids.AgentName
}

export const publicLayer = ApiApp.group(HostingApi.HostingApi, "publicAgents", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    const identity = yield* Identity.Identity
    const cachedRead = (yield* PublicAgentCache.PublicAgentCache).read
    const releases = yield* Releases.Releases
    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const channels = Effect.fnUntraced(function*(path: AgentPath) {
      const principal = yield* Auth.optionalPrincipal(identity)
      return { channels: yield* handle(releases.channels(principal, path.account, path.name)) }
    })
    return handlers
      .handle("list", ({ urlParams }) =>
        // The list is the same for everyone, but a bad credential is refused as on every public read.
        Auth.optionalPrincipal(identity).pipe(
          Effect.zipRight(handle(catalog.list({
            q: Option.fromNullable(urlParams.q).pipe(Option.filter((q) => q.trim() !== ""), Option.map((q) => q.trim())),
            limit: urlParams.limit,
            offset: urlParams.offset
          }))),
          Effect.map((page) => ({ ...page, limit: urlParams.limit, offset: urlParams.offset }))
        ))
      .handle("get", ({ path, request }) =>
        Effect.flatMap(
          Auth.optionalPrincipal(identity),
          (principal) => handle(cachedRead(principal, path.account, path.name, request.headers["if-none-match"]))
        ))
      .handle("channels", ({ path }) => channels(path))
  }))

export const layer = ApiApp.group(HostingApi.HostingApi, "agents", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    const releases = yield* Releases.Releases
    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const register = Effect.fnUntraced(function*(path: AgentPath, payload: typeof AgentsApi.RegisterRequest.Type) {
      const principal = yield* Principal.CurrentPrincipal
      const result = yield* handle(catalog.register(principal, { ...path, ...payload }))
      return {
        message: result.created ? "Build registered" : "Build updated",
        account: result.account,
        name: result.name,
        build_id: result.build_id,
        validation_warnings: result.validation_warnings
      }
    })
    const publish = Effect.fnUntraced(function*(path: AgentPath, payload: typeof AgentsApi.PublishRequest.Type) {
      const principal = yield* Principal.CurrentPrincipal
      const result = yield* handle(releases.publish(principal, { ...path, ...payload }))
      return {
        message: result.created
          ? `Published ${result.account}/${result.name} ${result.version}`
          : `${result.account}/${result.name} ${result.version} was already published for this build`,
        account: result.account,
        name: result.name,
        build_id: result.build_id,
        version: result.version
      }
    })
    const removeChannel = Effect.fnUntraced(function*(path: AgentPath & { readonly channel: Ids.ChannelName }) {
      const principal = yield* Principal.CurrentPrincipal
      yield* handle(releases.removeChannel(principal, path.account, path.name, path.channel))
      return { message: `Removed channel ${path.channel} of ${path.account}/${path.name}`, channel: path.channel }
    })
    return handlers
      .handle("register", ({ path, payload }) => register(path, payload))
      .handle("publish", ({ path, payload }) => publish(path, payload))
      .handle("setChannel", ({ path, payload }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) =>
          handle(releases.setChannel(principal, path.account, path.name, path.channel, payload.version))))
      .handle("removeChannel", ({ path }) => removeChannel(path))
      .handle("yank", ({ path, payload }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) =>
          handle(releases.yank(principal, path.account, path.name, path.version, Option.some(payload.reason)))))
      .handle("unyank", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) =>
          handle(releases.yank(principal, path.account, path.name, path.version, Option.none()))))
      .handle("config", ({ path }) =>
        Effect.flatMap(Principal.CurrentPrincipal, (principal) => handle(catalog.config(principal, path.account, path.name))))
  }))
