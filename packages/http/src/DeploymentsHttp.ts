/**
 * Handlers of the deployment routes.
 */
import { HostingApi } from "@hosting/api"
import { Deployments, Principal } from "@hosting/core"
import { Effect } from "effect"
import * as ApiApp from "./ApiApp.js"
import { handle } from "./ErrorMapping.js"

export const layer = ApiApp.group(HostingApi.HostingApi, "deployments", (handlers) =>
  Effect.gen(function*() {
    const deployments = yield* Deployments.Deployments
    const caller = Principal.CurrentPrincipal
    return handlers
      .handle("history", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(deployments.history(p, path.account, path.name))).pipe(
          Effect.map((list) => ({ deployments: list, count: list.length }))
        ))
      .handle("list", ({ path, urlParams }) => Effect.flatMap(caller, (p) => handle(deployments.list(p, path.account, urlParams))))
      .handle("deploy", ({ path, payload }) =>
        Effect.flatMap(caller, (p) => handle(deployments.deploy(p, { account: path.account, name: path.name, ...payload }))))
      .handle("get", ({ path }) => Effect.flatMap(caller, (p) => handle(deployments.get(p, path.deploymentId))))
      .handle("undeploy", ({ path }) => Effect.flatMap(caller, (p) => handle(deployments.undeploy(p, path.deploymentId))))
      .handle("rollback", ({ path, payload }) => Effect.flatMap(caller, (p) => handle(deployments.rollback(p, path.deploymentId, payload))))
      .handle("updateSettings", ({ path, payload }) =>
        Effect.flatMap(caller, (p) => handle(deployments.updateSettings(p, path.deploymentId, payload))))
      .handle("configMap", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(deployments.configMap(p, path.namespace, path.cmname, urlParams.account))))
      .handle("restartPod", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(deployments.restartPod(p, path.namespace, path.pod, urlParams.account))))
  }))
