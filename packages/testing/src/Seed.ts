/**
 * Test data: a fresh account with one user of each role and an outsider,
 * each with a bearer token. Names are unique, so tests can share a store.
 */
import { Deployment, Identity, Ids, Ports, type Principal } from "@hosting/core"
import * as Fixtures from "./Fixtures.js"
import { DateTime, Effect, Option } from "effect"
import { uniqueName } from "./StorageSuite.js"

/** The people of a seeded team. */
export type Person = "owner" | "admin" | "member" | "outsider"

export interface Team {
  readonly account: Ids.AccountName
  readonly tokens: Readonly<Record<Person, string>>
  readonly principals: Readonly<Record<Person, Principal.Principal>>
}

const people: ReadonlyArray<Person> = ["owner", "admin", "member", "outsider"]

/** Creates an account with an owner, an admin and a member, plus an outsider who belongs to another account. */
export const team = Effect.gen(function*() {
  const account = Ids.AccountName.make(uniqueName("team"))
  const elsewhere = Ids.AccountName.make(uniqueName("other"))
  const ids = Object.fromEntries(people.map((p) => [p, Ids.UserId.make(uniqueName(p))])) as Record<Person, Ids.UserId>
  const tokens = Object.fromEntries(people.map((p) => [p, `${ids[p]}-token`])) as Record<Person, string>
  yield* Fixtures.load({
    users: people.map((p) => ({ id: ids[p], name: `The ${p}`, tokens: [tokens[p]] })),
    accounts: [
      {
        name: account,
        members: [
          { user: ids.owner, role: "owner" },
          { user: ids.admin, role: "admin" },
          { user: ids.member, role: "member" }
        ]
      },
      { name: elsewhere, members: [{ user: ids.outsider, role: "owner" }] }
    ]
  })
  const identity = yield* Identity.Identity
  const principals = {} as Record<Person, Principal.Principal>
  for (const p of people) principals[p] = yield* identity.authenticate(tokens[p])
  const result: Team = { account, tokens, principals }
  return result
}).pipe(Effect.orDie)

/**
 * A deployment record of the team's own agent `helper` (storage only, no
 * cluster objects): enough for chat and traces in use-case tests.
 */
export const deployment = (team: Team) =>
  Effect.gen(function*() {
    const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
    const id = Deployment.DeploymentId.make(`dep-${globalThis.crypto.randomUUID()}`)
    yield* (yield* Ports.DeploymentStore).upsert({
      id,
      account_id: account.id,
      publisher_id: account.id,
      agent_name: Ids.AgentName.make("helper"),
      build_id: Ids.BuildId.make("b-1"),
      namespace: `${team.account}-helper`,
      status: "running",
      deployed_at: DateTime.unsafeMake("2026-11-01T00:00:00Z"),
      undeployed_at: Option.none(),
      spec: {}
    })
    return { id, accountId: account.id }
  }).pipe(Effect.orDie)
