/**
 * Handlers of the chat routes.
 */
import { HostingApi } from "@hosting/api"
import { Chat, Principal } from "@hosting/core"
import { Effect, Option } from "effect"
import * as ApiApp from "./ApiApp.js"
import { handle } from "./ErrorMapping.js"
import * as Sse from "./Sse.js"
import * as StreamLimits from "./StreamLimits.js"

export const layer = ApiApp.group(HostingApi.HostingApi, "chat", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* Chat.Chat
    const caller = Principal.CurrentPrincipal
    return handlers
      .handle("list", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(chat.list(p, path.deploymentId))).pipe(
          Effect.map((conversations) => ({ conversations }))
        ))
      .handle("setTitle", ({ path, payload }) =>
        Effect.flatMap(caller, (p) => handle(chat.setTitle(p, path.deploymentId, path.conversationId, payload.title))))
      .handle("send", ({ path, payload }) =>
        Effect.flatMap(caller, (p) => handle(chat.send(p, path.deploymentId, path.conversationId, payload))))
      .handle("history", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(chat.history(p, path.deploymentId, path.conversationId))).pipe(
          Effect.map((messages) => ({ messages }))
        ))
      // Without a generator: one made in a handler is a new generator function for every request (docs/decisions.md, "Generator functions made once").
      .handle("stream", ({ headers, path, urlParams }) =>
        StreamLimits.guard(Effect.flatMap(caller, (principal) => {
          const lastEventId = Option.fromNullable(headers["last-event-id"] ?? urlParams.last_event_id)
          return handle(Sse.pushed(
            Sse.replyFrames,
            (receiver) => chat.follow(principal, path.deploymentId, path.conversationId, lastEventId, receiver),
            Sse.retryFrame
          ))
        })))
      .handle("cancel", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(chat.cancel(p, path.deploymentId, path.conversationId))))
  }))
