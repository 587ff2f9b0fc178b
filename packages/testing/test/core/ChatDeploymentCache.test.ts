/**
 * Chat keeps the deployments it reads in the process and reads them again
 * once their accounts change (a wake-up on the event bus, which every
 * change of a deployment or an account's name sends).
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Accounts, Chat, Conversation, EventBus, Ids, Ports } from "@hosting/core"
import { MemoryStorage, Seed, TestServices } from "@hosting/testing"
import { Context, Effect, Layer } from "effect"

/** Reads of deployments by id, and a wake-up to send from inside the next one (a change that lands during a read). */
const spy = { reads: 0, duringRead: undefined as Effect.Effect<void> | undefined }

const countingStorage = Layer.map(MemoryStorage.layer, (context) => {
  const store = Context.get(context, Ports.DeploymentStore)
  return Context.add(context, Ports.DeploymentStore, {
    ...store,
    findById: (id) =>
      Effect.suspend(() => {
        spy.reads++
        const during = spy.duringRead ?? Effect.void
        spy.duringRead = undefined
        return Effect.zipLeft(store.findById(id), during)
      })
  })
})

const newConversation = () => Conversation.ConversationId.make(globalThis.crypto.randomUUID())

describe("the deployments chat reads", () => {
  withLayer(TestServices.make({ storageLayer: countingStorage }), { excludeTestServices: true })((it) => {
    it.effect("are read once their accounts are followed, then kept until a wake-up of either account; a read during which one arrives is not kept", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const chat = yield* Chat.Chat
        const bus = yield* EventBus.EventBus
        const send = chat.send(team.principals.member, deployment.id, newConversation(), { content: "hello" })
        const readsOf = (effect: Effect.Effect<unknown, unknown>) =>
          Effect.gen(function*() {
            const before = spy.reads
            yield* effect
            return spy.reads - before
          })
        // The first read follows the accounts; the next is kept; later sends read nothing.
        expect(yield* readsOf(Effect.zipRight(send, send))).toBe(2)
        expect(yield* readsOf(Effect.zipRight(send, send))).toBe(0)
        // A wake-up of the deploying account drops what was kept.
        yield* bus.publish([deployment.accountId])
        yield* Effect.yieldNow()
        expect(yield* readsOf(send)).toBe(1)
        expect(yield* readsOf(send)).toBe(0)
        // A wake-up that arrives while a record is read: the record is not kept (the publisher is the same account here).
        yield* bus.publish([deployment.accountId])
        yield* Effect.yieldNow()
        spy.duringRead = Effect.zipRight(bus.publish([deployment.accountId]), Effect.yieldNow())
        expect(yield* readsOf(Effect.zipRight(send, send))).toBe(2)
        expect(yield* readsOf(send)).toBe(0)
      }))

    it.effect("a renamed account is seen by the next message: the deployment is read again", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const chat = yield* Chat.Chat
        const send = chat.send(team.principals.member, deployment.id, newConversation(), { content: "hello" })
        yield* Effect.zipRight(send, send)
        const before = spy.reads
        yield* send
        expect(spy.reads).toBe(before)
        const accounts = yield* Accounts.Accounts
        yield* accounts.rename(team.principals.owner, team.account, Ids.AccountName.make(`${team.account}-renamed`))
        yield* Effect.yieldNow()
        yield* send
        expect(spy.reads).toBe(before + 1)
      }))
  })
})
