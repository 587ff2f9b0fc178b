/**
 * The authorization matrix: every route of @hosting/api, called by every kind
 * of caller, answers the status that interface.md, extensions.md and
 * docs/decisions.md give. The routes are reflected from the API definition,
 * so a route added without a row here fails the test. Every answer is also
 * checked against the OpenAPI document, and every error answer against the
 * `{ error, details }` body.
 *
 * Callers (columns):
 * - anonymous: no credential
 * - badToken: a bearer token nobody was given
 * - expiredToken: a token of the owner that expired
 * - nonMember: a user who owns another account only
 * - member, admin, owner: the roles of the account
 * - otherUser: another plain member of the same account, acting on a
 *   member's conversation or file (the contract's "not visible to others")
 * - cookie: the owner's browser session cookie with its X-CSRF-Token header
 * - cookieNoCsrf: the same cookie without the header
 * - readToken: a personal access token of the owner with the `read` scope
 *   only: the owner's answer where the route needs `read` (or no caller),
 *   403 `insufficient_scope` on every other route that needs a caller
 *
 * Where a route acts on a caller's own resource (a conversation, a file),
 * member, admin, owner and the cookie columns act on their own; everyone else
 * on the member's.
 */
import type { HttpServer } from "@effect/platform"
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import type { Cluster } from "@hosting/core"
import { ApiRoutes, Scopes } from "@hosting/http"
import { Effect } from "effect"
import {
  type Answer,
  bearer,
  type Call,
  conformanceProblems,
  conversationOf,
  channelSet,
  deployed,
  redeployed,
  deviceLogin,
  endpointById,
  endpoints,
  errorBodyProblems,
  fileOf,
  formBody,
  jsonBody,
  layer,
  invitationOf,
  exportedTrace,
  otlpExport,
  otlpTraceId,
  personalTokenOf,
  podOf,
  published,
  registered,
  registration,
  send,
  secretOf,
  sessionOf,
  world,
  type World,
  yanked
} from "./RouteHarness.js"

const bearerColumns = ["anonymous", "badToken", "expiredToken", "nonMember", "member", "admin", "owner", "otherUser"] as const
const cookieColumns = ["cookie", "cookieNoCsrf"] as const
type Column = typeof bearerColumns[number] | typeof cookieColumns[number] | "readToken"
type Person = "member" | "admin" | "owner"

/** Who is calling: the headers carrying the credential, and the credential itself for routes that take it in the body. */
interface Caller {
  readonly column: Column
  readonly headers: Readonly<Record<string, string>>
  readonly token: string | undefined
  readonly csrf: string | undefined
}

/** Whatever a route's setup made (ids, keys, names). */
type Target = Readonly<Record<string, string>>

/** What a setup may use: the test server and the cluster behind it. */
type Services = HttpServer.HttpServer | Cluster.Cluster

interface Entry {
  /** Makes what the route acts on; `token` is the resource owner's token. */
  readonly setup?: (w: World, token: string) => Effect.Effect<Target, never, Services>
  readonly request: (t: Target, w: World, c: Caller) => Call
  /** Statuses in the order of `bearerColumns`. */
  readonly expect: Readonly<Record<typeof bearerColumns[number], number>>
  /** Statuses of the cookie columns; by default those of the owner, and 403 without CSRF on a request other than GET. */
  readonly cookie?: Readonly<Record<typeof cookieColumns[number], number>>
}

const row = (...statuses: [number, number, number, number, number, number, number, number]) =>
  Object.fromEntries(bearerColumns.map((column, i) => [column, statuses[i]!])) as Entry["expect"]

/** No credential is read: everyone gets the same answer. */
const everyone = (status: number) => row(status, status, status, status, status, status, status, status)
/** Any authenticated caller. */
const authenticated = (ok: number) => row(401, 401, 401, ok, ok, ok, ok, ok)
/** Members of the account (any role); a non-member gets `outsider`. */
const members = (ok: number, outsider = 403) => row(401, 401, 401, outsider, ok, ok, ok, ok)
/** Owner or admin of the account. */
const managers = (ok: number, outsider = 403) => row(401, 401, 401, outsider, 403, ok, ok, 403)
/** The caller's own conversation or file: another member gets 404, never 403. */
const ownResource = (ok: number) => row(401, 401, 401, 403, ok, ok, ok, 404)

const v1 = (path: string) => `/api/v1${path}`
const withJson = (c: Caller, method: string, path: string, body: unknown): Call => {
  const json = jsonBody(body)
  return { method, path: v1(path), headers: { ...c.headers, ...json.headers }, body: json.body }
}
/** A call of an MCP client, which accepts JSON or an event stream. */
const mcp = (call: Call): Call => ({ ...call, headers: { ...call.headers, accept: "application/json, text/event-stream" } })
const bare = (c: Caller, method: string, path: string): Call => ({ method, path: v1(path), headers: c.headers })
const unique = (prefix: string) => `${prefix}-${globalThis.crypto.randomUUID().slice(0, 8)}`

const agentPath = (w: World) => `/agents/${w.team.account}/helper`
const conversationPath = (t: Target) => `/deployments/${t["deployment"]}/messaging/conversations/${t["conversation"]}`

const deployment = (w: World): Effect.Effect<Target, never, Services> => deployed(w)
const conversation = (w: World, token: string) =>
  Effect.gen(function*() {
    const d = yield* deployed(w)
    return { ...d, conversation: yield* conversationOf(token, d.deployment) }
  })
const file = (stage: "pending" | "uploaded" | "ready") => (w: World, token: string) =>
  Effect.gen(function*() {
    const d = yield* deployed(w)
    return { ...d, key: yield* fileOf(token, d.deployment, stage) }
  })

/** One entry per route of HostingApi, keyed by operationId. */
const matrix: Record<string, Entry> = {
  // Public catalog reads: no credential needed, but a bad one is refused (docs/decisions.md).
  "publicAgents.list": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => bare(c, "GET", `/agents?q=${w.team.account}`),
    expect: row(200, 401, 401, 200, 200, 200, 200, 200)
  },
  "publicAgents.get": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => bare(c, "GET", agentPath(w)),
    expect: row(200, 401, 401, 200, 200, 200, 200, 200)
  },
  // Channels are as public as the agent (issue 28).
  "publicAgents.channels": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => bare(c, "GET", `${agentPath(w)}/channels`),
    expect: row(200, 401, 401, 200, 200, 200, 200, 200)
  },
  "agents.setChannel": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => withJson(c, "PUT", `${agentPath(w)}/channels/stable`, { version: "1.0.0" }),
    expect: managers(200)
  },
  "agents.removeChannel": {
    setup: (w) => Effect.as(channelSet(w), {}),
    request: (_, w, c) => bare(c, "DELETE", `${agentPath(w)}/channels/stable`),
    expect: managers(200)
  },
  "agents.yank": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => withJson(c, "POST", `${agentPath(w)}/versions/1.0.0/yank`, { reason: "broken" }),
    expect: managers(200)
  },
  "agents.unyank": {
    setup: (w) => Effect.as(yanked(w), {}),
    request: (_, w, c) => bare(c, "DELETE", `${agentPath(w)}/versions/1.0.0/yank`),
    expect: managers(200)
  },
  "agents.register": {
    request: (_, w, c) => withJson(c, "POST", `${agentPath(w)}/register`, registration("b-2")),
    expect: managers(201)
  },
  "agents.publish": {
    setup: (w) => Effect.as(registered(w), {}),
    request: (_, w, c) => withJson(c, "POST", `${agentPath(w)}/publish`, { build_id: "b-1", version: "1.0.0" }),
    expect: managers(201)
  },
  // Non-members get the highest published version (docs/decisions.md).
  "agents.config": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => bare(c, "GET", `${agentPath(w)}/config`),
    expect: authenticated(200)
  },
  "accounts.me": { request: (_, __, c) => bare(c, "GET", "/me"), expect: authenticated(200) },
  "accounts.get": { request: (_, w, c) => bare(c, "GET", `/accounts/${w.team.account}`), expect: members(200) },
  "accounts.rename": {
    request: (_, w, c) => withJson(c, "PUT", `/accounts/${w.team.account}`, { name: unique("renamed") }),
    expect: managers(200)
  },
  "accounts.events": { request: (_, w, c) => bare(c, "GET", `/accounts/${w.team.account}/events`), expect: members(200) },
  // Issue 26: any signed-in user creates an account.
  "accounts.create": { request: (_, __, c) => withJson(c, "POST", "/accounts", { name: unique("created") }), expect: authenticated(201) },
  "accounts.members": { request: (_, w, c) => bare(c, "GET", `/accounts/${w.team.account}/members`), expect: members(200) },
  // The other member keeps the role member: owners and admins may; members may not.
  "accounts.setMember": {
    request: (_, w, c) => withJson(c, "PUT", `/accounts/${w.team.account}/members/${w.other.id}`, { role: "member" }),
    expect: managers(200)
  },
  // Removing the other member: owners and admins may, and so may that member themself (otherUser).
  "accounts.removeMember": {
    request: (_, w, c) => bare(c, "DELETE", `/accounts/${w.team.account}/members/${w.other.id}`),
    expect: row(401, 401, 401, 403, 403, 200, 200, 200)
  },
  // Owners only; each caller acts on a world of its own, so the account is there to delete.
  "accounts.remove": {
    request: (_, w, c) => bare(c, "DELETE", `/accounts/${w.team.account}`),
    expect: row(401, 401, 401, 403, 403, 403, 200, 403)
  },
  "accounts.audit": { request: (_, w, c) => bare(c, "GET", `/accounts/${w.team.account}/audit?limit=5`), expect: managers(200) },
  // Issue 28: members list the names; owners and admins write; to anyone else the account has none to show (404).
  "accounts.secrets": {
    setup: (w) => Effect.as(secretOf(w), {}),
    request: (_, w, c) => bare(c, "GET", `/accounts/${w.team.account}/secrets`),
    expect: members(200, 404)
  },
  "accounts.setSecret": {
    request: (_, w, c) => withJson(c, "PUT", `/accounts/${w.team.account}/secrets/API_KEY`, { value: "a value" }),
    expect: managers(200, 404)
  },
  "accounts.removeSecret": {
    setup: (w) => Effect.as(secretOf(w), {}),
    request: (_, w, c) => bare(c, "DELETE", `/accounts/${w.team.account}/secrets/API_KEY`),
    expect: managers(200, 404)
  },
  "accounts.invite": {
    request: (_, w, c) => withJson(c, "POST", `/accounts/${w.team.account}/invitations`, { role: "member", email: "new@example.com" }),
    expect: managers(201)
  },
  "accounts.invitations": { request: (_, w, c) => bare(c, "GET", `/accounts/${w.team.account}/invitations`), expect: managers(200) },
  "accounts.withdraw": {
    setup: (w) => Effect.map(invitationOf(w), (made) => ({ invitation: made.id })),
    request: (t, w, c) => bare(c, "DELETE", `/accounts/${w.team.account}/invitations/${t["invitation"]}`),
    expect: managers(200)
  },
  // Members of the account already are 409 already_member; the outsider joins.
  "accounts.accept": {
    setup: (w) => Effect.map(invitationOf(w), (made) => ({ code: made.code })),
    request: (t, _, c) => bare(c, "POST", `/invitations/${t["code"]}/accept`),
    expect: row(401, 401, 401, 200, 409, 409, 409, 409)
  },
  "deployments.history": {
    setup: deployment,
    request: (_, w, c) => bare(c, "GET", `${agentPath(w)}/deployment/history`),
    expect: members(200)
  },
  "deployments.deploy": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => withJson(c, "POST", `${agentPath(w)}/deployments`, {}),
    expect: managers(201)
  },
  // A deployment of an account the caller is not in does not exist for them.
  "deployments.get": {
    setup: deployment,
    request: (t, _, c) => bare(c, "GET", `/deployments/${t["deployment"]}`),
    expect: members(200, 404)
  },
  "deployments.undeploy": {
    setup: deployment,
    request: (t, _, c) => bare(c, "DELETE", `/deployments/${t["deployment"]}`),
    expect: managers(200, 404)
  },
  "deployments.rollback": {
    setup: redeployed,
    request: (t, _, c) => withJson(c, "POST", `/deployments/${t["deployment"]}/rollback`, {}),
    expect: managers(201, 404)
  },
  "deployments.updateSettings": {
    setup: deployment,
    request: (t, _, c) => withJson(c, "PUT", `/deployments/${t["deployment"]}/settings`, { concurrent_send: "queue" }),
    expect: managers(200, 404)
  },
  // Issue 29: a deployment's A2A agent, for the members of the deploying account (others: the deployment does not exist).
  "a2a.agentCard": {
    setup: deployment,
    request: (t, _, c) => bare(c, "GET", `/deployments/${t["deployment"]}/a2a/.well-known/agent-card.json`),
    expect: members(200, 404)
  },
  "a2a.rpc": {
    setup: deployment,
    request: (t, _, c) => withJson(c, "POST", `/deployments/${t["deployment"]}/a2a`, { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "nothing" } }),
    expect: members(200, 404)
  },
  // Issue 29: a deployment's MCP server, for the members of the deploying account; the catalog's, for anyone signed in.
  "mcp.deployment": {
    setup: deployment,
    request: (t, _, c) => mcp(withJson(c, "POST", `/deployments/${t["deployment"]}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" })),
    expect: members(200, 404)
  },
  "mcp.deploymentStream": {
    setup: deployment,
    request: (t, _, c) => bare(c, "GET", `/deployments/${t["deployment"]}/mcp`),
    expect: members(405, 404)
  },
  "mcp.catalog": {
    request: (_, __, c) => mcp(withJson(c, "POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "resources/list" })),
    expect: authenticated(200)
  },
  "mcp.catalogStream": { request: (_, __, c) => bare(c, "GET", "/mcp"), expect: authenticated(405) },
  "deployments.configMap": {
    setup: deployment,
    request: (t, w, c) => bare(c, "GET", `/deployments/${t["namespace"]}/configmap/helper-config?account=${w.team.account}`),
    expect: members(200)
  },
  "deployments.restartPod": {
    setup: (w) =>
      Effect.gen(function*() {
        const d = yield* deployed(w)
        return { ...d, pod: yield* podOf(d.namespace) }
      }),
    request: (t, w, c) => bare(c, "POST", `/deployments/${t["namespace"]}/pods/${t["pod"]}/restart?account=${w.team.account}`),
    expect: members(200)
  },
  "chat.list": {
    setup: deployment,
    request: (t, _, c) => bare(c, "GET", `/deployments/${t["deployment"]}/chat/conversations`),
    expect: members(200)
  },
  "chat.setTitle": {
    setup: conversation,
    request: (t, _, c) =>
      withJson(c, "PUT", `/deployments/${t["deployment"]}/chat/conversations/${t["conversation"]}/title`, { title: "Renamed" }),
    expect: ownResource(200)
  },
  "chat.send": {
    setup: conversation,
    request: (t, _, c) => withJson(c, "POST", `${conversationPath(t)}/messages`, { content: "again" }),
    expect: ownResource(200)
  },
  "chat.history": {
    setup: conversation,
    request: (t, _, c) => bare(c, "GET", `${conversationPath(t)}/messages`),
    expect: ownResource(200)
  },
  "chat.stream": {
    setup: conversation,
    request: (t, _, c) => bare(c, "GET", `${conversationPath(t)}/stream`),
    expect: ownResource(200)
  },
  "chat.cancel": {
    setup: conversation,
    request: (t, _, c) => bare(c, "POST", `${conversationPath(t)}/cancel`),
    expect: ownResource(200)
  },
  "files.reserve": {
    setup: deployment,
    request: (t, _, c) =>
      withJson(c, "POST", `/deployments/${t["deployment"]}/files`, { filename: "a.txt", content_type: "text/plain", size: 3 }),
    expect: members(201)
  },
  "files.upload": {
    setup: file("pending"),
    request: (t, _, c) => ({
      method: "PUT",
      path: v1(`/deployments/${t["deployment"]}/files/${t["key"]}/content`),
      headers: { ...c.headers, "content-type": "application/octet-stream" },
      body: "hello"
    }),
    expect: ownResource(200)
  },
  "files.complete": {
    setup: file("uploaded"),
    request: (t, _, c) => bare(c, "POST", `/deployments/${t["deployment"]}/files/${t["key"]}/complete`),
    expect: ownResource(200)
  },
  "files.list": {
    setup: deployment,
    request: (t, _, c) => bare(c, "GET", `/deployments/${t["deployment"]}/files`),
    expect: members(200)
  },
  "files.download": {
    setup: file("ready"),
    request: (t, _, c) => bare(c, "GET", `/deployments/${t["deployment"]}/files/${t["key"]}/content`),
    expect: ownResource(200)
  },
  "traces.list": {
    setup: (w) => Effect.as(published(w), {}),
    request: (_, w, c) => bare(c, "GET", `${agentPath(w)}/observability/traces`),
    expect: members(200)
  },
  "traces.get": {
    setup: (w) => Effect.as(exportedTrace(w), {}),
    request: (_, w, c) => bare(c, "GET", `${agentPath(w)}/observability/traces/${otlpTraceId}`),
    expect: members(200)
  },
  "traces.ingest": {
    setup: (w) => Effect.as(registered(w), {}),
    request: (_, w, c) => withJson(c, "POST", "/otlp/v1/traces", otlpExport(w.team.account, "helper")),
    expect: members(200)
  },
  // Device login (RFC 8628, 7009, 8414): public endpoints that read no bearer token or cookie.
  "oauth.deviceCode": {
    request: (_, __, c) => ({ method: "POST", path: v1("/oauth/device/code"), ...withHeaders(formBody({ client_id: "cli" }), c) }),
    expect: everyone(200),
    cookie: { cookie: 200, cookieNoCsrf: 200 }
  },
  "oauth.token": {
    request: (_, __, c) => ({
      method: "POST",
      path: v1("/oauth/token"),
      ...withHeaders(formBody({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: "nothing" }), c)
    }),
    expect: everyone(400),
    cookie: { cookie: 400, cookieNoCsrf: 400 }
  },
  "oauth.revoke": {
    request: (_, __, c) => ({ method: "POST", path: v1("/oauth/revoke"), ...withHeaders(formBody({ token: "whatever" }), c) }),
    expect: everyone(200),
    cookie: { cookie: 200, cookieNoCsrf: 200 }
  },
  "oauth.metadata": {
    request: (_, __, c) => bare(c, "GET", "/.well-known/oauth-authorization-server"),
    expect: everyone(200),
    cookie: { cookie: 200, cookieNoCsrf: 200 }
  },
  // The approval page: a sign-in form without a session, the approval form with one.
  "oauth.devicePage": {
    request: (_, __, c) => bare(c, "GET", "/device"),
    expect: everyone(200),
    cookie: { cookie: 200, cookieNoCsrf: 200 }
  },
  // The page's sign-in takes the token in the form: no token is a 400, a bad one the form again with 401.
  "oauth.deviceSession": {
    request: (_, __, c) => ({
      method: "POST",
      path: v1("/device/session"),
      ...withHeaders(formBody(c.token === undefined ? {} : { token: c.token }), c)
    }),
    expect: row(400, 401, 401, 200, 200, 200, 200, 200),
    cookie: { cookie: 400, cookieNoCsrf: 400 }
  },
  // Decisions need the page's session and the CSRF value of its form: without a session, the sign-in form (401).
  "oauth.deviceDecision": {
    setup: () => Effect.map(deviceLogin, (user_code) => ({ user_code })),
    request: (t, _, c) => ({
      method: "POST",
      path: v1("/device"),
      ...withHeaders(formBody({ user_code: t["user_code"]!, decision: "deny", csrf: c.csrf ?? "none" }), c)
    }),
    expect: everyone(401),
    cookie: { cookie: 200, cookieNoCsrf: 403 }
  },
  "wellKnown.metadata": {
    request: (_, __, c) => ({ method: "GET", path: "/.well-known/oauth-authorization-server/api/v1", headers: c.headers }),
    expect: everyone(200),
    cookie: { cookie: 200, cookieNoCsrf: 200 }
  },
  // Browser sessions: sign-in takes the token in the body; reading needs the cookie; signing out needs the CSRF value.
  // Public: the sign-in page reads them before anyone signs in; single sign-on is not configured on the test server.
  "signOn.methods": { request: (_, __, c) => bare(c, "GET", "/session/methods"), expect: everyone(200) },
  "signOn.login": { request: (_, __, c) => bare(c, "GET", "/oidc/login?next=/"), expect: everyone(404) },
  "signOn.callback": { request: (_, __, c) => bare(c, "GET", "/oidc/callback?code=x&state=y"), expect: everyone(404) },
  // The world has users already: setting up is refused to everyone, whatever they carry.
  "setup.complete": {
    request: (_, __, c) => withJson(c, "POST", "/setup", { code: "AAAAA-BBBBB-CCCCC-DDDDD", user_id: unique("first") }),
    expect: everyone(409)
  },
  "tokens.create": {
    request: (_, __, c) => withJson(c, "POST", "/tokens", { name: "ci", scopes: ["read"] }),
    expect: authenticated(201)
  },
  "tokens.list": { request: (_, __, c) => bare(c, "GET", "/tokens"), expect: authenticated(200) },
  // Each caller revokes a token of their own: the same id is not found for anyone else.
  "tokens.revoke": {
    setup: (_, token) => Effect.map(personalTokenOf(token), (made) => ({ token: made.id })),
    request: (t, _, c) => bare(c, "DELETE", `/tokens/${t["token"]}`),
    expect: row(401, 401, 401, 404, 200, 200, 200, 404)
  },
  "session.signIn": {
    request: (_, __, c) => withJson(c, "POST", "/session", c.token === undefined ? {} : { token: c.token }),
    expect: row(400, 401, 401, 200, 200, 200, 200, 200),
    cookie: { cookie: 400, cookieNoCsrf: 400 }
  },
  "session.current": {
    request: (_, __, c) => bare(c, "GET", "/session"),
    expect: everyone(401),
    cookie: { cookie: 200, cookieNoCsrf: 200 }
  },
  // Without a cookie there is nothing to end: 204 and a cleared cookie.
  "session.signOut": {
    request: (_, __, c) => bare(c, "DELETE", "/session"),
    expect: everyone(204),
    cookie: { cookie: 204, cookieNoCsrf: 403 }
  }
}

/** A body's headers with the caller's credential headers. */
function withHeaders(body: { headers: Record<string, string>; body: string }, c: Caller) {
  return { headers: { ...c.headers, ...body.headers }, body: body.body }
}

const expectedOf = (id: string, entry: Entry, column: Column): number => {
  if (column === "readToken") {
    const route = ApiRoutes.routes.find((r) => r.id === id)!
    return endpointById(id).authenticated && Scopes.declared(route) !== "read" ? 403 : entry.expect.owner
  }
  if (column !== "cookie" && column !== "cookieNoCsrf") return entry.expect[column]
  if (entry.cookie) return entry.cookie[column]
  const endpoint = endpointById(id)
  const owner = entry.expect.owner
  return column === "cookieNoCsrf" && endpoint.method !== "GET" && endpoint.authenticated ? 403 : owner
}

const resourceOwner = (column: Column): Person =>
  column === "member" || column === "admin" || column === "owner"
    ? column
    : column.startsWith("cookie") || column === "readToken"
    ? "owner"
    : "member"

const callerOf = (w: World, column: Column) =>
  Effect.gen(function*() {
    const token = (t: string): Caller => ({ column, headers: bearer(t), token: t, csrf: undefined })
    switch (column) {
      case "anonymous":
        return { column, headers: {}, token: undefined, csrf: undefined }
      case "badToken":
        return token(`not-a-token-${globalThis.crypto.randomUUID()}`)
      case "expiredToken":
        return token(w.expired)
      case "nonMember":
        return token(w.team.tokens.outsider)
      case "otherUser":
        return token(w.other.token)
      case "readToken":
        return token((yield* personalTokenOf(w.team.tokens.owner, ["read"])).token)
      case "cookie":
      case "cookieNoCsrf": {
        const session = yield* sessionOf(w.team.tokens.owner)
        return column === "cookie"
          ? { column, headers: { cookie: session.cookie, "x-csrf-token": session.csrf }, token: undefined, csrf: session.csrf }
          : { column, headers: { cookie: session.cookie }, token: undefined, csrf: undefined }
      }
      default:
        return token(w.team.tokens[column])
    }
  })

interface Outcome {
  readonly id: string
  readonly column: Column
  readonly expected: number
  readonly answer: Answer
}

/** One cell: a fresh world, the route's resources, one call. */
const cell = (id: string, entry: Entry, column: Column) =>
  Effect.gen(function*() {
    const w = yield* world
    const owner = resourceOwner(column)
    const ownerToken = w.team.tokens[owner]
    const target = entry.setup ? yield* entry.setup(w, ownerToken) : {}
    const caller = yield* callerOf(w, column)
    const answer = yield* send(entry.request(target, w, caller))
    const outcome: Outcome = { id, column, expected: expectedOf(id, entry, column), answer }
    return outcome
  })

const columnsOf = (sessionRoutes: boolean): ReadonlyArray<Column> =>
  sessionRoutes ? [...bearerColumns, "readToken", ...cookieColumns] : [...bearerColumns, "readToken"]

describe("HTTP: authorization matrix", () => {
  it("has exactly one entry per route of HostingApi (a new route needs its row here)", () => {
    const routes = endpoints.map((e) => e.id).sort()
    expect(Object.keys(matrix).sort()).toEqual(routes)
  })

  withLayer(layer(), { excludeTestServices: true })((it) => {
    it.effect("every route answers every caller with the status of the contract, in the documented shape", () =>
      Effect.gen(function*() {
        const sessionRoutes = endpoints.some((e) => e.id === "session.signIn")
        const cells = Object.entries(matrix).filter(([id]) => endpoints.some((e) => e.id === id)).flatMap(([id, entry]) =>
          columnsOf(sessionRoutes).map((column) => [id, entry, column] as const)
        )
        const outcomes = yield* Effect.forEach(cells, ([id, entry, column]) => cell(id, entry, column), { concurrency: 8 })

        const wrong = outcomes
          .filter((o) => o.answer.status !== o.expected)
          .map((o) => `${o.id} as ${o.column}: expected ${o.expected}, got ${o.answer.status} ${o.answer.text.slice(0, 160)}`)
        const shapes = outcomes.flatMap((o) => {
          const endpoint = endpointById(o.id)
          const problems = conformanceProblems(endpoint, o.answer).map((p) => `${o.id} as ${o.column}: ${p}`)
          const isPage = (o.answer.headers["content-type"] ?? "").startsWith("text/html")
          if (o.answer.status >= 400 && !isPage) {
            problems.push(...errorBodyProblems(o.answer).map((p) => `${o.id} as ${o.column}: ${p}`))
          }
          return problems
        })
        expect(wrong).toEqual([])
        expect(shapes).toEqual([])
        expect(outcomes.length).toBe(cells.length)
      }), 120_000)
  })
})
