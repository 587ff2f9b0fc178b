/**
 * Handlers of the deployment routes. A live deployment's record links its
 * A2A agent card and its MCP server, under the public URL (PublicUrl.ts).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { A2aApi, HostingApi, McpApi } from "@hosting/api"
import { Deployment, Deployments, Principal, Trusted } from "@hosting/core"
import { Effect } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as ApiRoutes from "./ApiRoutes.js"
import { handle } from "./ErrorMapping.js"
import * as PublicUrl from "./PublicUrl.js"

const agentCardLink = ApiRoutes.linkTo(ApiRoutes.routeOf(A2aApi.A2aApi, "agentCard"))
const mcpLink = ApiRoutes.linkTo(ApiRoutes.routeOf(McpApi.McpApi, "deployment"))

/** The record with its links under `base` (the API's public base URL); an undeployed one has none. */
export const withLinks = (deployment: Deployment.Deployment, base: string): Deployment.Deployment =>
  deployment.undeployed_at !== null
    ? deployment
    : Trusted.make(
      Deployment.Deployment,
      // Copied with `Object.assign`: Node 20 makes `{ ...record, links }` (a spread, then a key) in about 1.5 µs,
      // five times as long (docs/performance.md, "Requests decoded by compiled decoders").
      Object.assign({}, deployment, {
        // Links made here from the route definitions: strings, as the schema wants them.
        links: Trusted.make(Deployment.DeploymentLinks, {
          a2a_card: agentCardLink(base, { deploymentId: deployment.id }),
          mcp: mcpLink(base, { deploymentId: deployment.id })
        })
      })
    )

export const layerWith = (options: PublicUrl.PublicUrlOptions) => ApiApp.group(HostingApi.HostingApi, "deployments", (handlers) =>
  Effect.gen(function*() {
    const deployments = yield* Deployments.Deployments
    const caller = Principal.CurrentPrincipal
    const base = Effect.map(HttpServerRequest.HttpServerRequest, (request) => PublicUrl.baseOf(request, options))
    const linked = <E, R>(effect: Effect.Effect<Deployment.Deployment, E, R>) =>
      Effect.zipWith(effect, base, withLinks)
    return handlers
      .handle("history", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(deployments.history(p, path.account, path.name))).pipe(
          Effect.zipWith(base, (list, at) => list.map((d) => withLinks(d, at))),
          Effect.map((list) => ({ deployments: list, count: list.length }))
        ))
      .handle("list", ({ path, urlParams }) => Effect.flatMap(caller, (p) => handle(deployments.list(p, path.account, urlParams))))
      .handle("deploy", ({ path, payload }) =>
        linked(Effect.flatMap(caller, (p) => handle(deployments.deploy(p, { account: path.account, name: path.name, ...payload })))))
      .handle("get", ({ path }) => linked(Effect.flatMap(caller, (p) => handle(deployments.get(p, path.deploymentId)))))
      .handle("undeploy", ({ path }) => linked(Effect.flatMap(caller, (p) => handle(deployments.undeploy(p, path.deploymentId)))))
      .handle("rollback", ({ path, payload }) =>
        linked(Effect.flatMap(caller, (p) => handle(deployments.rollback(p, path.deploymentId, payload)))))
      .handle("updateSettings", ({ path, payload }) =>
        Effect.flatMap(caller, (p) => handle(deployments.updateSettings(p, path.deploymentId, payload))))
      .handle("configMap", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(deployments.configMap(p, path.namespace, path.cmname, urlParams.account))))
      .handle("restartPod", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(deployments.restartPod(p, path.namespace, path.pod, urlParams.account))))
  }))

/** The deployment routes with links under the listening address (no public URL, no trusted proxy). */
export const layer = layerWith({})
