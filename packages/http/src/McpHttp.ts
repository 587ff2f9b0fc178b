/**
 * Handlers of the MCP routes: every deployment is a Model Context Protocol
 * server over streamable HTTP (the tool `send_message`: a turn of the
 * caller's conversation), and the catalog is one listing the caller's
 * deployments as resources. Stateless: each POST is served by a server and
 * a transport of the official SDK made for it and its caller; a GET (the
 * stream of a session) is 405. The SDK is loaded at the first MCP request.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { A2aApi, DeploymentsApi, HostingApi, McpApi } from "@hosting/api"
import { Chat, type Deployment, Deployments, Principal } from "@hosting/core"
import { Effect } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as ApiRoutes from "./ApiRoutes.js"
import * as DeploymentsHttp from "./DeploymentsHttp.js"
import { handle } from "./ErrorMapping.js"
import { catalogServer, deploymentServer } from "./internal/mcpServers.js"
import * as McpSdk from "./internal/mcpSdk.js"
import * as PublicUrl from "./PublicUrl.js"
import * as StreamLimits from "./StreamLimits.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

const routes = {
  record: ApiRoutes.routeOf(DeploymentsApi.DeploymentsApi, "get"),
  mcp: ApiRoutes.routeOf(McpApi.McpApi, "deployment"),
  a2a: ApiRoutes.routeOf(A2aApi.A2aApi, "rpc"),
  agentCard: ApiRoutes.routeOf(A2aApi.A2aApi, "agentCard")
}

/** The answer to a GET: a stateless server has no stream to open (MCP streamable HTTP allows 405). */
const noStream = (what: string) =>
  JsonAnswer.json(
    {
      error: "method_not_allowed",
      details: `${what} is a stateless MCP server: POST JSON-RPC messages to it; it offers no stream to open with GET.`
    },
    { status: 405, headers: { allow: "POST" } }
  )

/** The path of a deployment's route. */
interface DeploymentPath {
  readonly deploymentId: Deployment.DeploymentId
}

/** The request body as text, for the SDK to parse (malformed JSON is the protocol's parse error). */
const bodyText = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.orElseSucceed(request.text, () => ""))

export const layerWith = (options: PublicUrl.PublicUrlOptions) => ApiApp.group(HostingApi.HostingApi, "mcp", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* Chat.Chat
    const deployments = yield* Deployments.Deployments
    const runtime = yield* Effect.runtime<never>()

    const urlsOf = (base: string) => (id: Deployment.DeploymentId) => ({
      record: ApiRoutes.link(base, routes.record, { deploymentId: id }),
      mcp: ApiRoutes.link(base, routes.mcp, { deploymentId: id }),
      a2a: ApiRoutes.link(base, routes.a2a, { deploymentId: id }),
      agentCard: ApiRoutes.link(base, routes.agentCard, { deploymentId: id })
    })

    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const serveDeployment = Effect.fnUntraced(function*(path: DeploymentPath) {
      const principal = yield* Principal.CurrentPrincipal
      const deployment = yield* handle(deployments.get(principal, path.deploymentId))
      const body = yield* bodyText
      const sdk = yield* McpSdk.load
      return yield* McpSdk.serve(sdk, deploymentServer(sdk, { deployment, principal, chat, runtime }), body)
      // A call follows a reply for as long as it streams: it holds one of the caller's streams, as the reply stream does.
    }, StreamLimits.guard)
    const deploymentStream = Effect.fnUntraced(function*(path: DeploymentPath) {
      const principal = yield* Principal.CurrentPrincipal
      yield* handle(deployments.get(principal, path.deploymentId))
      return noStream(`The deployment ${path.deploymentId}`)
    })
    const catalog = Effect.gen(function*() {
      const principal = yield* Principal.CurrentPrincipal
      const request = yield* HttpServerRequest.HttpServerRequest
      const base = PublicUrl.baseOf(request, options)
      const body = yield* bodyText
      const sdk = yield* McpSdk.load
      const server = catalogServer(sdk, {
        principal,
        deployments,
        runtime,
        urls: urlsOf(base),
        linked: (deployment) => DeploymentsHttp.withLinks(deployment, base),
        template: ApiRoutes.link(base, routes.record, { deploymentId: "{deploymentId}" }).replace("%7BdeploymentId%7D", "{deploymentId}")
      })
      return yield* McpSdk.serve(sdk, server, body)
    })

    return handlers
      .handle("deployment", ({ path }) => serveDeployment(path))
      .handle("deploymentStream", ({ path }) => deploymentStream(path))
      .handle("catalog", () => catalog)
      .handle("catalogStream", () => Effect.succeed(noStream("The catalog")))
  }))
