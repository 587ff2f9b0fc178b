/**
 * Chat takes a reply in the form the agent runtime offers: the callback
 * form when present (it spares the Stream machinery), the Stream otherwise.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AgentRuntime, Chat } from "@hosting/core"
import { TestServices } from "@hosting/testing"
import { Context, Effect, Layer, Stream } from "effect"
import { chatSetup, newConversation, waitForReply } from "./replies.js"

const runtime = AgentRuntime.AgentRuntime.of({
  reply: () => Stream.make("from ", "the stream"),
  replyEach: (_, emit) => Effect.sync(() => ["from ", "the ", "callback"].forEach((chunk) => emit(chunk)))
})

describe("the forms of a reply", () => {
  withLayer(TestServices.make({ agentLayer: Layer.succeed(AgentRuntime.AgentRuntime, runtime) }), { excludeTestServices: true })((it) => {
    it.effect("chat takes the reply from replyEach when the runtime has it, from the stream otherwise", () =>
      Effect.gen(function*() {
        const { team, deployment, chat } = yield* chatSetup
        const conversation = newConversation()
        yield* chat.send(team.principals.member, deployment, conversation, { content: "which form?" })
        const reply = yield* waitForReply(conversation)
        expect([reply.status, reply.content]).toEqual(["complete", "from the callback"])
        const streamOnly = { reply: runtime.reply }
        const other = newConversation()
        yield* Effect.scoped(Effect.gen(function*() {
          const chatOnStream = Context.get(yield* Layer.build(Chat.Chat.Default), Chat.Chat)
          yield* chatOnStream.send(team.principals.member, deployment, other, { content: "which form?" })
          const replied = yield* waitForReply(other)
          expect([replied.status, replied.content]).toEqual(["complete", "from the stream"])
        }).pipe(Effect.provideService(AgentRuntime.AgentRuntime, streamOnly)))
      }))
  })
})
