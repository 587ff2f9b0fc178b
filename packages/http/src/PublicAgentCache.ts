/**
 * Reads of an agent (`GET /agents/{account}/{name}`) answered from encoded
 * JSON kept in memory, with an ETag so that clients revalidate with a 304.
 * Two views are kept apart: the members' of the agent's account (every
 * build, the spec's env values) and everyone else's (published versions,
 * env values hidden), which anonymous callers and other accounts share.
 *
 * The event bus keeps it right across processes: entries belong to an
 * account, and every wake-up of that account (a build registered or
 * published, a deployment, a rename) drops them. A read stores what it read
 * only if no wake-up happened while it read, and only once this process is
 * subscribed to the account, so a change can never leave a stale entry.
 *
 * It is a decision of the read's handler, reached through the same request
 * path as every route.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Agent, Catalog, EventBus, type Ids, Policy, type Principal, Recent } from "@hosting/core"
import { Context, Effect, Layer, Option, Scope, Schema } from "effect"
import * as JsonAnswer from "./internal/jsonAnswer.js"

interface Entry {
  /** The answer, made once: its JSON text and its headers (answers are immutable values). */
  readonly answer: HttpServerResponse.HttpServerResponse
  readonly etag: string
  readonly account: Ids.AccountId
}

/** Most entries kept; the oldest go first. */
const maxEntries = 10_000
/** Most accounts followed on the bus; reads of further accounts are not kept. */
const maxAccounts = 1_000

const encodeAgent = Schema.encode(Agent.Agent)

/** A weak ETag from the body (FNV-1a, 32 bits, with the length). */
const etagOf = (body: string) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < body.length; i++) {
    hash ^= body.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return `W/"${body.length.toString(36)}-${(hash >>> 0).toString(36)}"`
}

/** Whether an If-None-Match header names the ETag. */
const matches = (header: string | undefined, etag: string) =>
  header !== undefined && (header.trim() === "*" || header.split(",").some((tag) => tag.trim() === etag))

/** The key of an entry: the route's path parameters and the view. */
const keyOf = (account: string, name: string, member: boolean) => `${member ? "members" : "public"}:${account}/${name}`

/** Whether a caller is a member of the account: by name, as the path names it, and by id, as the catalog found it. */
const memberByName = (principal: Option.Option<Principal.Principal>, account: string) =>
  Option.exists(principal, (p) => Policy.isMemberByName(p, account))
const memberById = (principal: Option.Option<Principal.Principal>, account: Ids.AccountId) =>
  Option.exists(principal, (p) => Policy.isMemberOf(p, account))

/** Headers of a kept answer and of its 304. */
const headersOf = (etag: string) => ({ etag, "cache-control": "no-cache" })

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog.Catalog
  const bus = yield* EventBus.EventBus
  const scope = yield* Effect.scope
  const entries = Recent.make<string, Entry>(maxEntries)
  const followed = new Set<Ids.AccountId>()
  /** Grows at every wake-up of a followed account. */
  let generation = 0

  const dropAccount = (account: Ids.AccountId) => {
    generation++
    for (const [key, entry] of entries) if (entry.account === account) entries.delete(key)
  }

  const subscribing = new Set<Ids.AccountId>()
  /** Follows an account's wake-ups for the life of the server: subscribed before it counts as followed. */
  const follow = Effect.fnUntraced(function*(account: Ids.AccountId) {
    if (subscribing.has(account) || followed.has(account)) return
    subscribing.add(account)
    const wakeups = yield* Scope.extend(bus.subscribe(account), scope)
    yield* wakeups.take.pipe(Effect.tap(() => Effect.sync(() => dropAccount(account))), Effect.forever, Effect.forkIn(scope))
    followed.add(account)
    subscribing.delete(account)
  })

  // Kept as text: Node writes a text body with its headers in one piece (internal/jsonAnswer.ts).
  const answerOf = (text: string, etag: string) => JsonAnswer.ofText(text, { headers: headersOf(etag) })
  /** The answer, or a 304 when the client holds it. */
  const respond = (answer: HttpServerResponse.HttpServerResponse, etag: string, ifNoneMatch: string | undefined) =>
    matches(ifNoneMatch, etag) ? HttpServerResponse.empty({ status: 304, headers: headersOf(etag) }) : answer

  /** Reads the agent and keeps its answer, when what it read may be kept. */
  const readAndKeep = Effect.fnUntraced(function*(
    principal: Option.Option<Principal.Principal>,
    account: Ids.AccountName,
    name: Ids.AgentName,
    key: string,
    member: boolean,
    ifNoneMatch: string | undefined
  ) {
    const before = generation
    const { account_id, agent } = yield* catalog.view(principal, account, name)
    const text = JSON.stringify(yield* Effect.orDie(encodeAgent(agent)))
    const etag = etagOf(text)
    const answer = answerOf(text, etag)
    if (followed.has(account_id)) {
      // Kept only if nothing changed while it was read, under the view it is.
      if (generation === before && memberById(principal, account_id) === member) {
        entries.set(key, { answer, etag, account: account_id })
      }
    } else if (followed.size + subscribing.size < maxAccounts) {
      // The first read of an account subscribes; later reads keep what they read.
      yield* follow(account_id)
    }
    return respond(answer, etag, ifNoneMatch)
  })

  /** The agent as the caller may see it, from what is kept when it can be (then with no step of its own). */
  const read = (
    principal: Option.Option<Principal.Principal>,
    account: Ids.AccountName,
    name: Ids.AgentName,
    ifNoneMatch: string | undefined
  ): ReturnType<typeof readAndKeep> => {
    const member = memberByName(principal, account)
    const key = keyOf(account, name, member)
    const cached = entries.get(key)
    return cached !== undefined
      ? Effect.succeed(respond(cached.answer, cached.etag, ifNoneMatch))
      : readAndKeep(principal, account, name, key, member, ifNoneMatch)
  }
  return { read } as const
})

/** The cache of one server. */
export class PublicAgentCache extends Context.Tag("@hosting/http/PublicAgentCache")<
  PublicAgentCache,
  Effect.Effect.Success<typeof make>
>() {}

/** The cache for the life of the server; needs Catalog and EventBus. */
export const layer = Layer.scoped(PublicAgentCache, make)
