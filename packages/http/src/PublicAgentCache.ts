/**
 * Anonymous reads of an agent (`GET /agents/{account}/{name}` without a
 * token) answered from encoded JSON kept in memory, with an ETag so that
 * clients revalidate with a 304.
 *
 * The event bus keeps it right across processes: entries belong to an
 * account, and every wake-up of that account (a build registered or
 * published, a deployment, a rename) drops them. A read stores what it read
 * only if no wake-up happened while it read, and only once this process is
 * subscribed to the account, so a change can never leave a stale entry.
 *
 * `answer` gives the same answer synchronously from what is kept, so a
 * server can reply to the busiest public read before any routing
 * (`examples/server` does, on Node's request event).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { AgentsApi, SessionApi } from "@hosting/api"
import { Agent, Catalog, EventBus, type Ids } from "@hosting/core"
import { Context, Effect, Layer, Option, Scope, Schema } from "effect"
import * as ApiRoutes from "./ApiRoutes.js"

interface Entry {
  readonly body: string
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

/** A complete answer: status, headers and body (empty for 304). */
export interface CachedAnswer {
  readonly status: 200 | 304
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** The agent read's route, and its path (`/api/v1/agents/{account}/{name}`, nothing after it; escapes left to the router). */
const agentRead = ApiRoutes.routeOf(AgentsApi.PublicAgentsApi, "get")
const agentPath = ApiRoutes.pattern(agentRead.path, { segment: "[^/%?#]+" })

/** The key of an entry: the route's path parameters. */
const keyOf = (account: string, name: string) => `${account}/${name}`

/** Headers of both the routed and the early answer. */
const headersOf = (etag: string) => ({ etag, "cache-control": "no-cache" })

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog.Catalog
  const bus = yield* EventBus.EventBus
  const scope = yield* Effect.scope
  const entries = new Map<string, Entry>()
  const followed = new Set<Ids.AccountId>()
  /** Grows at every wake-up of a followed account. */
  let generation = 0

  const dropAccount = (account: Ids.AccountId) => {
    generation++
    for (const [key, entry] of entries) if (entry.account === account) entries.delete(key)
  }

  const subscribing = new Set<Ids.AccountId>()
  /** Follows an account's wake-ups for the life of the server: subscribed before it counts as followed. */
  const follow = (account: Ids.AccountId) =>
    Effect.gen(function*() {
      if (subscribing.has(account) || followed.has(account)) return
      subscribing.add(account)
      const wakeups = yield* Scope.extend(bus.subscribe(account), scope)
      yield* wakeups.take.pipe(Effect.tap(() => Effect.sync(() => dropAccount(account))), Effect.forever, Effect.forkIn(scope))
      followed.add(account)
      subscribing.delete(account)
    })

  const respond = (body: string, etag: string, ifNoneMatch: string | undefined) =>
    matches(ifNoneMatch, etag)
      ? HttpServerResponse.empty({ status: 304, headers: headersOf(etag) })
      : HttpServerResponse.text(body, { contentType: "application/json", headers: headersOf(etag) })

  /**
   * The answer to a request from what is kept, without any routing; undefined
   * when the request is not an anonymous agent read, or the agent is not kept.
   * A request with a credential (header or session cookie) is never answered
   * here: members may see more than anyone.
   */
  const answer = (
    method: string,
    url: string,
    headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  ): CachedAnswer | undefined => {
    if (method !== agentRead.method || headers["authorization"] !== undefined) return undefined
    const cookie = headers["cookie"]
    if (cookie !== undefined && String(cookie).includes(`${SessionApi.cookieName}=`)) return undefined
    const path = agentPath.exec(url)
    if (path === null) return undefined
    const cached = entries.get(keyOf(path.groups!["account"]!, path.groups!["name"]!))
    if (cached === undefined) return undefined
    const ifNoneMatch = headers["if-none-match"]
    if (typeof ifNoneMatch === "string" && matches(ifNoneMatch, cached.etag)) {
      return { status: 304, headers: headersOf(cached.etag), body: "" }
    }
    return { status: 200, headers: { "content-type": "application/json", ...headersOf(cached.etag) }, body: cached.body }
  }

  const read = (account: Ids.AccountName, name: Ids.AgentName, ifNoneMatch: string | undefined) =>
    Effect.gen(function*() {
      const key = keyOf(account, name)
      const cached = entries.get(key)
      if (cached !== undefined) return respond(cached.body, cached.etag, ifNoneMatch)
      const before = generation
      const { account_id, agent } = yield* catalog.view(Option.none(), account, name)
      const body = JSON.stringify(yield* Effect.orDie(encodeAgent(agent)))
      const etag = etagOf(body)
      if (followed.has(account_id)) {
        // Kept only if nothing changed while it was read.
        if (generation === before) {
          if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!)
          entries.set(key, { body, etag, account: account_id })
        }
      } else if (followed.size + subscribing.size < maxAccounts) {
        // The first read of an account subscribes; later reads keep what they read.
        yield* follow(account_id)
      }
      return respond(body, etag, ifNoneMatch)
    })
  return { read, answer } as const
})

/** The cache of one server, shared by the routed handler and an early answer. */
export class PublicAgentCache extends Context.Tag("@hosting/http/PublicAgentCache")<
  PublicAgentCache,
  Effect.Effect.Success<typeof make>
>() {}

/** The cache for the life of the server; needs Catalog and EventBus. */
export const layer = Layer.scoped(PublicAgentCache, make)
