/**
 * An account keeps an owner under concurrency on PostgreSQL (issue 26): two
 * owners who each demote or remove the other at the same moment cannot both
 * succeed, because each change reads the owners with the account's
 * memberships locked (`AccountStore.lockMembers`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Identity, Ports } from "@hosting/core"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Seed, TestServices } from "@hosting/testing"
import { Effect, Exit, Layer, Option } from "effect"
import { afterAll } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

describe.skipIf(database === undefined)(`the last owner on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  it.layer(
    TestServices.make({ storageLayer: Layer.orDie(PostgresStorage.layer({ url: database?.url ?? "", maxConnections: 4 })) }),
    { timeout: 30_000 }
  )((it) => {
    it.effect("two owners removing each other at once leave one owner", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        for (let round = 0; round < 5; round++) {
          const team = yield* Seed.team
          const { admin, owner } = team.principals
          yield* accounts.setRole(owner, team.account, admin.user.id, "owner")
          // The admin is an owner now: principals read afresh, as each request reads its own.
          const identity = yield* Identity.Identity
          const [a, b] = [yield* identity.authenticate(team.tokens.owner), yield* identity.authenticate(team.tokens.admin)]
          const exits = yield* Effect.all([
            Effect.exit(accounts.removeMember(a, team.account, b.user.id)),
            Effect.exit(accounts.setRole(b, team.account, a.user.id, "member"))
          ], { concurrency: "unbounded" })
          expect(exits.filter((exit: Exit.Exit<unknown, unknown>) => Exit.isSuccess(exit)).length).toBe(1)
          const store = yield* Ports.AccountStore
          const account = Option.getOrThrow(yield* store.findByName(team.account))
          expect((yield* store.membersOf(account.id)).filter((m) => m.role === "owner").length).toBe(1)
        }
      }))
  })
})
