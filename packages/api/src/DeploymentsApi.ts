/**
 * Deployments: history, deploy and undeploy, ConfigMaps and pod restarts.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Cluster, Deployment, Ids, Secret } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { pageFields } from "./Paging.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const account = HttpApiSchema.param("account", Ids.AccountName)
const name = HttpApiSchema.param("name", Ids.AgentName)
const deploymentId = HttpApiSchema.param("deploymentId", Deployment.DeploymentId)

/** A DNS-1123 label: what Kubernetes accepts as a namespace. */
const Namespace = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, { message: () => "must be a Kubernetes namespace name" })
)
/** A DNS-1123 subdomain: what Kubernetes accepts as a ConfigMap or pod name. */
const ObjectName = Schema.String.pipe(
  Schema.maxLength(253),
  Schema.pattern(/^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$/, { message: () => "must be a Kubernetes object name" })
)

const namespace = HttpApiSchema.param("namespace", Namespace)
const cmname = HttpApiSchema.param("cmname", ObjectName)
const pod = HttpApiSchema.param("pod", ObjectName)

/** `?account=` names the account the namespace must belong to. */
export const OwnershipParams = Schema.Struct({ account: Ids.AccountName })

export const HistoryResponse = Schema.Struct({
  deployments: Schema.Array(Deployment.Deployment),
  count: Schema.Int
})

/** `?status=` and the page of an account's deployments. */
export const AccountDeploymentsParams = Schema.Struct({
  status: Schema.optional(Deployment.StatusFilter.annotations({
    description: "`live` (not ended), `ended`, or one status: pending, progressing, available, failed, superseded, undeployed"
  })),
  ...pageFields("Deployments", Deployment.maxPageSize, Deployment.defaultPageSize)
})

export const AccountDeploymentsPage = Schema.Struct({
  deployments: Schema.Array(Deployment.Deployment),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
})

export const DeployRequest = Schema.Struct({
  build_id: Schema.optional(Ids.BuildId),
  /** An exact version, or a semver range (`^1.2`, `~1.4.0`, `>=1 <2`): its newest match that is not yanked. */
  version: Schema.optional(Ids.VersionRange),
  /** A channel of the agent (`latest`, or one set with PUT .../channels/{channel}). */
  channel: Schema.optional(Ids.ChannelName),
  /** Keep following the range or channel (or, with neither, `latest`): roll forward when it moves. */
  follow: Schema.optional(Schema.Boolean),
  into: Schema.optional(Ids.AccountName),
  /** Env over the spec's: a plain value, or `{ secret: NAME }` of the deploying account. */
  env: Schema.optional(Secret.EnvOverrides)
})

/** Where a rollback goes: a build or version of the deployment's history, or (neither) the build before it. */
export const RollbackRequest = Schema.Struct({
  build_id: Schema.optional(Ids.BuildId),
  version: Schema.optional(Ids.SemVer)
})

/** A deployment's settings, all of them (a PUT replaces them). */
export const SettingsRequest = Schema.Struct({
  concurrent_send: Deployment.ConcurrentSend
})

export const RestartResponse = Schema.Struct({ status: Schema.String, pod: Schema.String })

export class DeploymentsApi extends HttpApiGroup.make("deployments")
  .add(
    HttpApiEndpoint.get("history")`/agents/${account}/${name}/deployment/history`
      .addSuccess(HistoryResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "Deployments of an agent that the caller's accounts made, most recent first")
  )
  .add(
    HttpApiEndpoint.get("list")`/accounts/${account}/deployments`
      .setUrlParams(AccountDeploymentsParams)
      .addSuccess(AccountDeploymentsPage)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The deployments an account made, most recent first (members)")
      .annotate(
        OpenApi.Description,
        "Every deployment the account made, live or ended, kept by `status` when given (`live`, `ended`, or one " +
          "status). Paged with `limit` and `offset`, as traces are; `total` counts every match."
      )
  )
  .add(
    HttpApiEndpoint.post("deploy")`/agents/${account}/${name}/deployments`
      .annotate(RequiredScope, "deploy")
      // `env` may carry up to 100 values of up to 32 KiB each; the limit bounds them together.
      .annotate(BodyLimit, 256 * KiB)
      .setPayload(DeployRequest)
      .addSuccess(Deployment.Deployment, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Summary,
        "Deploy a build, a version or semver range, a channel, or the latest published version (owner or admin of the deploying account)"
      )
      .annotate(
        OpenApi.Description,
        "Give at most one of `version` and `channel` (`build_id` may come with an exact `version` that matches it). " +
          "A range picks its newest published version that is not yanked (404 `no_matching_version` naming the range); " +
          "a yanked version is refused (409 `version_yanked`). With `follow`, the deployment rolls forward when a newer " +
          "match is published or the channel moves."
      )
      .annotate(
        OpenApi.Description,
        "`env` sets environment variables over the spec's `env`: a plain value, or `{ \"secret\": NAME }` to read a " +
          "secret of the deploying account (PUT /accounts/{account}/secrets/{name}). Secret values go into a Kubernetes " +
          "Secret the workload reads, never into the ConfigMap or the record; the record keeps `env` as given. A secret " +
          "the deploying account lacks (referred to here or in the spec) answers 409 `secret_missing` naming it, and " +
          "nothing is deployed."
      )
  )
  .add(
    HttpApiEndpoint.get("get")`/deployments/${deploymentId}`
      .addSuccess(Deployment.Deployment)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "One deployment (members of the deploying account)")
  )
  .add(
    HttpApiEndpoint.del("undeploy")`/deployments/${deploymentId}`
      .annotate(RequiredScope, "deploy")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(Deployment.Deployment)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Undeploy: remove the cluster objects and end the deployment (owner or admin)")
  )
  .add(
    HttpApiEndpoint.post("rollback")`/deployments/${deploymentId}/rollback`
      .annotate(RequiredScope, "deploy")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(RollbackRequest)
      .addSuccess(Deployment.Deployment, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Return a deployment's namespace to a build it ran before (owner or admin)")
      .annotate(
        OpenApi.Description,
        "Without a body (or `{}`), the last build before this deployment's that differs from it; with `build_id` or " +
          "`version`, that build of the namespace's history. The new deployment supersedes what runs in the namespace " +
          "and names this one in `rolled_back_from`. 409 `nothing_to_roll_back` when there is no such build."
      )
  )
  .add(
    HttpApiEndpoint.put("updateSettings")`/deployments/${deploymentId}/settings`
      .annotate(RequiredScope, "deploy")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(SettingsRequest)
      .addSuccess(Deployment.DeploymentSettings)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Set a deployment's settings (owner or admin)")
      .annotate(
        OpenApi.Description,
        "`concurrent_send`: what a send does while a reply of its conversation is still streaming, unless the send " +
          "says otherwise: `interrupt` (the default) stops the running reply, `queue` starts the new reply when it " +
          "ends, `reject` answers 409 `reply_in_progress`. The settings show on the deployment (`settings`); a deploy " +
          "or rollback into the namespace keeps them."
      )
  )
  .add(
    HttpApiEndpoint.get("configMap")`/deployments/${namespace}/configmap/${cmname}`
      .setUrlParams(OwnershipParams)
      .addSuccess(Cluster.ConfigMap)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "The data of a ConfigMap in a deployment's namespace")
  )
  .add(
    HttpApiEndpoint.post("restartPod")`/deployments/${namespace}/pods/${pod}/restart`
      .annotate(RequiredScope, "deploy")
      .annotate(BodyLimit, 16 * KiB)
      .setUrlParams(OwnershipParams)
      .addSuccess(RestartResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Delete a pod so that the cluster recreates it")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Deployments")
  .annotate(OpenApi.Description, "Deploy and undeploy agents, their history, and the ConfigMaps and pods of their namespaces")
{}
