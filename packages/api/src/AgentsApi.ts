/**
 * The agent catalog: register, publish, read, list, config.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Agent, AgentSpec, Ids, Text } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound, Unauthorized } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const account = HttpApiSchema.param("account", Ids.AccountName)
const name = HttpApiSchema.param("name", Ids.AgentName)
const channel = HttpApiSchema.param("channel", Ids.ChannelName)
const version = HttpApiSchema.param("version", Ids.SemVer)

/** An OCI registry reference: host[:port][/path], optionally with an http(s) scheme. */
export const RegistryUrl = Schema.String.pipe(
  Schema.maxLength(512),
  Schema.pattern(/^(https?:\/\/)?[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d{1,5})?(?:\/[A-Za-z0-9._\/-]*)?$/, {
    message: () => "must be an OCI registry URL such as ghcr.io/acme or https://registry.example.com:5000/team"
  })
)

export const RegisterRequest = Schema.Struct({
  build_id: Ids.BuildId,
  registry: RegistryUrl,
  spec_content: Text.Text.pipe(Schema.maxLength(AgentSpec.maxSpecLength)),
  readme: Schema.optional(Text.Text.pipe(Schema.maxLength(1024 * 1024)))
})

export const RegisterResponse = Schema.Struct({
  message: Schema.String,
  account: Schema.String,
  name: Schema.String,
  build_id: Schema.String,
  validation_warnings: Schema.Array(Agent.ValidationWarning)
})

export const PublishRequest = Schema.Struct({
  build_id: Ids.BuildId,
  version: Ids.SemVer
})

export const PublishResponse = Schema.Struct({
  message: Schema.String,
  account: Schema.String,
  name: Schema.String,
  build_id: Schema.String,
  version: Schema.String
})

/** The channels of an agent, `latest` first. */
export const ChannelsResponse = Schema.Struct({ channels: Schema.Array(Agent.Channel) })

/** Where a channel points. */
export const SetChannelRequest = Schema.Struct({ version: Ids.SemVer })

export const RemoveChannelResponse = Schema.Struct({ message: Schema.String, channel: Schema.String })

/** Why a version is yanked: shown in the catalog beside it. */
export const YankRequest = Schema.Struct({
  reason: Text.Text.pipe(Schema.minLength(1), Schema.maxLength(500))
})

/** Largest page of the catalog. */
export const maxCatalogLimit = 200

export const ListParams = Schema.Struct({
  q: Schema.optional(Text.Text.pipe(Schema.maxLength(200))),
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxCatalogLimit)),
    { default: () => 50 }
  ),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 1_000_000)), {
    default: () => 0
  })
})

export const ListResponse = Schema.Struct({
  agents: Schema.Array(Agent.AgentSummary),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
})

/** Public reads: no credential needed, but a valid one shows a member every build. */
export class PublicAgentsApi extends HttpApiGroup.make("publicAgents")
  .add(
    HttpApiEndpoint.get("list", "/agents")
      .setUrlParams(ListParams)
      .addSuccess(ListResponse)
      .addError(BadRequest)
      .addError(Unauthorized)
      .annotate(OpenApi.Summary, "List agents with at least one published version (public)")
  )
  .add(
    HttpApiEndpoint.get("get")`/agents/${account}/${name}`
      .addSuccess(Agent.Agent)
      .addError(BadRequest)
      .addError(Unauthorized)
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "Public callers see only published versions; authenticated members of the account see every build."
      )
      .annotate(OpenApi.Summary, "Agent details with versions")
  )
  .add(
    HttpApiEndpoint.get("channels")`/agents/${account}/${name}/channels`
      .addSuccess(ChannelsResponse)
      .addError(BadRequest)
      .addError(Unauthorized)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The agent's release channels and the versions they name (public, like the agent)")
      .annotate(
        OpenApi.Description,
        "`latest` comes first and is implicit: the highest published version that is not yanked. A channel whose version " +
          "was yanked since carries `yanked`; deploys through it are refused until it moves."
      )
  )
  .annotate(OpenApi.Title, "Catalog")
  .annotate(OpenApi.Description, "Public reads of the agent catalog: no credential needed; a valid one shows a member every build")
{}

/** Authenticated catalog operations. */
export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("register")`/agents/${account}/${name}/register`
      .annotate(RequiredScope, "publish")
      // A build's documents: its spec (256 KiB) and its readme (1 MiB).
      .annotate(BodyLimit, "server")
      .setPayload(RegisterRequest)
      .addSuccess(RegisterResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Register or update an agent build (owner or admin)")
  )
  .add(
    HttpApiEndpoint.post("publish")`/agents/${account}/${name}/publish`
      .annotate(RequiredScope, "publish")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(PublishRequest)
      .addSuccess(PublishResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Give a build a semver version (owner or admin)")
  )
  .add(
    HttpApiEndpoint.put("setChannel")`/agents/${account}/${name}/channels/${channel}`
      .annotate(RequiredScope, "publish")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(SetChannelRequest)
      .addSuccess(Agent.Channel)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Create a channel or move it to a published version (owner or admin)")
      .annotate(
        OpenApi.Description,
        "Deployments that follow the channel roll forward to the version. `latest` cannot be set (400); a yanked " +
          "version is refused (409 `version_yanked`); an unpublished one is 404 `version_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.del("removeChannel")`/agents/${account}/${name}/channels/${channel}`
      .annotate(RequiredScope, "publish")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(RemoveChannelResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Remove a channel (owner or admin); deployments that followed it keep running")
  )
  .add(
    HttpApiEndpoint.post("yank")`/agents/${account}/${name}/versions/${version}/yank`
      .annotate(RequiredScope, "publish")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(YankRequest)
      .addSuccess(Agent.Version)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Yank a published version with a reason (owner or admin)")
      .annotate(
        OpenApi.Description,
        "Ranges and `latest` pass a yanked version by, channels and exact deploys refuse it, the catalog marks it. " +
          "Deployments running it keep running and get a `deployment.changed` event with a warning."
      )
  )
  .add(
    HttpApiEndpoint.del("unyank")`/agents/${account}/${name}/versions/${version}/yank`
      .annotate(RequiredScope, "publish")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(Agent.Version)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Undo a yank (owner or admin); deployments following a range it matches roll forward to it")
  )
  .add(
    HttpApiEndpoint.get("config")`/agents/${account}/${name}/config`
      .addSuccess(Agent.AgentConfig)
      .addError(BadRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "What is needed to deploy the latest build")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Agents")
  .annotate(OpenApi.Description, "Register builds of an agent, publish them with a semver version, and read what deploying needs")
{}
