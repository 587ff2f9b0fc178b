#!/usr/bin/env node
// The chat use cases in one process, without HTTP: how much of a `flow`
// message's server CPU is the core's (Chat on SQLite with the echo agent,
// the buses in process, the tracer off as the example server runs it) and
// how much is the HTTP path around it. Not a goal workload: it has no
// baseline to divide by; compare its numbers with `bench flow` and `reads`.
//
//   node bench/core/chat.mjs [--clients 10] [--seconds 5] [part ...]
//
// Parts: history (a 2-message history read), follow (open the reply stream
// of a finished conversation, read to its end, close), send (send to a new
// conversation; its reply runs meanwhile), flow (send, then follow the live
// reply to its end). Needs the build (`pnpm run build`).
import * as Fixtures from "@hosting/testing/Fixtures"
import * as TestServices from "@hosting/testing/TestServices"
import { Chat, Conversation, Deployment, Identity, Ids, Ports } from "@hosting/core"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { DateTime, Deferred, Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const parts = ["history", "follow", "send", "flow"]
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { clients: { type: "string", default: "10" }, seconds: { type: "string", default: "5" } }
})
const clients = Number(values.clients)
const seconds = Number(values.seconds)
const chosen = positionals.length === 0 ? parts : positionals
for (const part of chosen) {
  if (!parts.includes(part)) {
    console.error(`unknown part ${part}; one of ${parts.join(", ")}`)
    process.exit(2)
  }
}

/** A team of one member with a running deployment, in a fresh store. */
const setUp = Effect.gen(function*() {
  yield* Fixtures.load({
    users: [{ id: "member", name: "A member", tokens: ["member-token"] }],
    accounts: [{ name: "team", members: [{ user: "member", role: "member" }] }]
  })
  const principal = yield* (yield* Identity.Identity).authenticate("member-token")
  const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(Ids.AccountName.make("team")))
  const deployment = Deployment.DeploymentId.make("dep-bench")
  yield* (yield* Ports.DeploymentStore).upsert({
    id: deployment,
    account_id: account.id,
    publisher_id: account.id,
    agent_name: Ids.AgentName.make("helper"),
    build_id: Ids.BuildId.make("b-1"),
    namespace: "team-helper",
    status: "running",
    deployed_at: DateTime.unsafeMake("2026-11-01T00:00:00Z"),
    undeployed_at: Option.none(),
    spec: {}
  })
  return { principal, deployment }
})

const newConversation = () => Conversation.ConversationId.make(globalThis.crypto.randomUUID())

/** One step of a part, for the chat service and the team. */
const stepOf = (part, chat, { principal, deployment }, finished) => {
  const follow = (id) =>
    Effect.scoped(Effect.gen(function*() {
      const ended = yield* Deferred.make()
      yield* chat.follow(principal, deployment, id, Option.none(), {
        push: (items) => {
          if (items.some((item) => item._tag === "Completed" || item._tag === "Failed")) Deferred.unsafeDone(ended, Effect.void)
          return true
        },
        end: () => Deferred.unsafeDone(ended, Effect.void)
      })
      yield* Deferred.await(ended)
    }))
  const send = (id) => chat.send(principal, deployment, id, { content: "hello there" })
  switch (part) {
    case "history":
      return chat.history(principal, deployment, finished)
    case "follow":
      return follow(finished)
    case "send":
      return Effect.suspend(() => send(newConversation()))
    case "flow":
      return Effect.suspend(() => {
        const id = newConversation()
        return Effect.zipRight(send(id), follow(id))
      })
  }
}

/** Runs `step` by `clients` fibers in a loop until `until`; counts the steps. */
const drive = (step, until) =>
  Effect.suspend(() => {
    let count = 0
    const client = Effect.whileLoop({ while: () => Date.now() < until, body: () => step, step: () => void count++ })
    return Effect.map(Effect.all(Array.from({ length: clients }, () => client), { concurrency: "unbounded", discard: true }), () => count)
  })

const measure = (part, chat, team, finished) =>
  Effect.gen(function*() {
    const step = stepOf(part, chat, team, finished)
    yield* drive(step, Date.now() + 1000)
    const cpu = process.cpuUsage()
    const start = Date.now()
    const count = yield* drive(step, start + seconds * 1000)
    const used = process.cpuUsage(cpu)
    const elapsed = Date.now() - start
    return { part, count, perSecond: Math.round(count / elapsed * 1000), cpuUs: Math.round((used.user + used.system) / count) }
  })

const dir = mkdtempSync(join(tmpdir(), "hosting-bench-core-"))
const services = TestServices.make({ storageLayer: SqliteStorage.layer({ filename: join(dir, "db.sqlite") }) })

const program = Effect.gen(function*() {
  const team = yield* setUp
  const chat = yield* Chat.Chat
  // A finished conversation of two messages, for the reads.
  const finished = newConversation()
  yield* chat.send(team.principal, team.deployment, finished, { content: "hello there" })
  yield* stepOf("follow", chat, team, finished)
  const rows = []
  for (const part of chosen) rows.push(yield* measure(part, chat, team, finished))
  console.log(`chat use cases in process, SQLite file, ${clients} clients, ${seconds} s each`)
  console.log("part      steps/s  µs of CPU a step")
  for (const row of rows) console.log(`${row.part.padEnd(9)} ${String(row.perSecond).padStart(7)}  ${String(row.cpuUs).padStart(16)}`)
})

try {
  await Effect.runPromise(program.pipe(Effect.provide(Layer.merge(services, Layer.setTracerEnabled(false))), Effect.scoped))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
