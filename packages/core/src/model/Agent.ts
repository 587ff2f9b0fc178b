/**
 * Agents and their builds (a build with a semver version is a published Version).
 */
import { type DateTime, Option, Schema } from "effect"
import { AccountId, AccountName, AgentId, AgentName, BuildId, ChannelName, compareSemVerDescending, SemVer } from "./Ids.js"
import { isSecretRef, type SecretName } from "./Secret.js"
import * as Trusted from "./Trusted.js"

/** One finding of the specification checks: never fatal, shown to the publisher. */
export class ValidationWarning extends Schema.Class<ValidationWarning>("ValidationWarning")({
  code: Schema.String,
  path: Schema.String,
  message: Schema.String
}) {}

/** The spec as a free-form map (it is the publisher's document). */
export const SpecMap = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type SpecMap = typeof SpecMap.Type

/** Why and when a published version was withdrawn (npm's deprecation, Cargo's yank). */
export class Yank extends Schema.Class<Yank>("Yank")({
  reason: Schema.String,
  yanked_at: Schema.DateTimeUtc
}) {}

/** A build of an agent, as stored. */
export class Build extends Schema.Class<Build>("Build")({
  agent_id: AgentId,
  build_id: BuildId,
  spec: SpecMap,
  spec_content: Schema.String,
  readme: Schema.String,
  validation_warnings: Schema.Array(ValidationWarning),
  version: Schema.OptionFromNullOr(SemVer),
  published_at: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  registered_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc,
  /** Set while the published version is yanked: ranges, channels and "latest" pass it by. */
  yanked: Schema.optional(Yank)
}) {}

/** An agent as stored: identity and registry. */
export class AgentRecord extends Schema.Class<AgentRecord>("AgentRecord")({
  id: AgentId,
  account_id: AccountId,
  account: AccountName,
  name: AgentName,
  registry: Schema.String,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/** A build as the API shows it (interface.md "Version"). */
export class Version extends Schema.Class<Version>("Version")({
  build_id: BuildId,
  version: Schema.optional(SemVer),
  spec: SpecMap,
  readme: Schema.String,
  published_at: Schema.optional(Schema.DateTimeUtc),
  registered_at: Schema.DateTimeUtc,
  validation_warnings: Schema.Array(ValidationWarning),
  /** Present on a yanked version: why, and since when. */
  yanked: Schema.optional(Yank)
}) {}

/** A channel as stored: the version it points to. */
export interface ChannelRecord {
  readonly agent_id: AgentId
  readonly name: ChannelName
  readonly version: SemVer
  readonly updated_at: DateTime.Utc
}

/** A channel as the API shows it: `latest` is always there and always implicit. */
export class Channel extends Schema.Class<Channel>("Channel")({
  name: ChannelName,
  version: SemVer,
  build_id: BuildId,
  /** True for `latest`, which follows the highest published version that is not yanked and cannot be set. */
  implicit: Schema.Boolean,
  /** When the channel was last moved; absent for `latest`. */
  updated_at: Schema.optional(Schema.DateTimeUtc),
  /** Present when the version the channel points to was yanked since: deploys through the channel are refused until it moves. */
  yanked: Schema.optional(Yank)
}) {}

/** An agent with the versions the caller may see (interface.md "Agent"). */
export class Agent extends Schema.Class<Agent>("Agent")({
  account: AccountName,
  name: AgentName,
  registry: Schema.String,
  versions: Schema.Array(Version)
}) {}

/** One entry of the public catalog. */
export class AgentSummary extends Schema.Class<AgentSummary>("AgentSummary")({
  account: AccountName,
  name: AgentName,
  registry: Schema.String,
  description: Schema.optional(Schema.String),
  latest_version: SemVer,
  latest_build_id: BuildId,
  published_at: Schema.DateTimeUtc,
  versions_count: Schema.Int
}) {}

/** What a deployer needs to run the latest build (`GET /agents/{account}/{name}/config`). */
export class AgentConfig extends Schema.Class<AgentConfig>("AgentConfig")({
  account: AccountName,
  name: AgentName,
  build_id: BuildId,
  version: Schema.optional(SemVer),
  registry: Schema.String,
  image: Schema.String,
  spec: SpecMap,
  env: Schema.Record({ key: Schema.String, value: Schema.String })
}) {}

/** What the choice of a version reads of a build (a store may read no more than that for a catalog page). */
export type VersionFacts = Pick<Build, "version" | "yanked">

/** Published versions, highest semver first. */
export const publishedOf = <B extends VersionFacts>(builds: ReadonlyArray<B>): Array<B> =>
  builds
    .filter((b) => Option.isSome(b.version))
    .sort((a, b) => compareSemVerDescending(Option.getOrThrow(a.version), Option.getOrThrow(b.version)))

/** A build as the API shows it; outside the agent's account (`member` false), without the values of its `env`. */
export const versionView = (build: Build, member: boolean) =>
  Trusted.make(Version, {
    build_id: build.build_id,
    version: Option.getOrUndefined(build.version),
    spec: member ? build.spec : withEnvHidden(build.spec),
    readme: build.readme,
    published_at: Option.getOrUndefined(build.published_at),
    registered_at: build.registered_at,
    validation_warnings: build.validation_warnings,
    ...(build.yanked === undefined ? {} : { yanked: build.yanked })
    // A view of a stored record: the schema checked it on the way in, and the HTTP layer encodes it with it.
  })

/** Published versions that are not yanked, highest semver first: what a range, a channel or "latest" may pick. */
export const installableOf = <B extends VersionFacts>(builds: ReadonlyArray<B>): Array<B> =>
  publishedOf(builds).filter((b) => b.yanked === undefined)

/** The image of a build: the spec's `image` when given, else `<registry>/<name>:<build_id>`. */
export const imageOf = (agent: AgentRecord, build: Build) => {
  const image = build.spec["image"]
  if (typeof image === "string" && image !== "") return image
  const registry = agent.registry.replace(/^[a-z]+:\/\//i, "").replace(/\/+$/, "")
  return `${registry}/${agent.name}:${build.build_id}`
}

/** The string values of a spec's `env`; anything else is left out. */
export const envOf = (spec: SpecMap): Record<string, string> => {
  const env = spec["env"]
  if (env === null || typeof env !== "object" || Array.isArray(env)) return {}
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"))
}

/**
 * The entries of a spec's `env` that refer to a secret (`{ secret: NAME }`):
 * env name to secret name. Malformed references are left out (registration
 * warned about them).
 */
export const secretRefsOf = (spec: SpecMap): Record<string, SecretName> => {
  const env = spec["env"]
  if (env === null || typeof env !== "object" || Array.isArray(env)) return {}
  return Object.fromEntries(
    Object.entries(env).flatMap(([name, value]) => isSecretRef(value) ? [[name, value.secret]] : [])
  )
}

/** What a caller outside the agent's account sees instead of each `env` value. */
export const hiddenEnvValue = "(hidden)"

/**
 * The spec as a caller outside the agent's account sees it: the names under
 * `env` with every value hidden (a publisher may have put a credential
 * there); an `env` that is not a mapping is hidden whole. Everything else is
 * as registered.
 */
export const withEnvHidden = (spec: SpecMap): SpecMap => {
  if (!("env" in spec)) return spec
  const env = spec["env"]
  const names = env !== null && typeof env === "object" && !Array.isArray(env) ? Object.keys(env) : undefined
  return { ...spec, env: names === undefined ? hiddenEnvValue : Object.fromEntries(names.map((name) => [name, hiddenEnvValue])) }
}
