/**
 * Handlers of the setup route and of personal access tokens.
 */
import { HostingApi } from "@hosting/api"
import { Principal, Setup, Tokens } from "@hosting/core"
import { Effect } from "effect"
import * as ApiApp from "./ApiApp.js"
import { handle } from "./ErrorMapping.js"

export const setupLayer = ApiApp.group(HostingApi.HostingApi, "setup", (handlers) =>
  Effect.map(Setup.Setup, (setup) =>
    handlers.handle("complete", ({ payload }) =>
      handle(setup.complete({ code: payload.code, user_id: payload.user_id, name: payload.name ?? payload.user_id })))))

export const tokensLayer = ApiApp.group(HostingApi.HostingApi, "tokens", (handlers) =>
  Effect.map(Tokens.Tokens, (tokens) =>
    handlers
      .handle("create", ({ payload }) => Effect.flatMap(Principal.CurrentPrincipal, (p) => handle(tokens.create(p, payload))))
      .handle("list", () =>
        Effect.flatMap(Principal.CurrentPrincipal, (p) => handle(tokens.list(p))).pipe(Effect.map((list) => ({ tokens: list }))))
      .handle("revoke", ({ path }) => Effect.flatMap(Principal.CurrentPrincipal, (p) => handle(tokens.revoke(p, path.tokenId))))))
