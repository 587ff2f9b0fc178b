/**
 * `hosting deployments history|create|get|settings|rollback|delete|configmap|restart`.
 */
import { Args, Command, Options } from "@effect/cli"
import { Deployment, Ids, SchemaIssues, Secret } from "@hosting/core"
import { Effect, Option, Schema } from "effect"
import * as Arguments from "./Arguments.js"
import { usageError } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** A status with the cluster's reason beside it, when it gave one: `failed (ImagePullBackOff)`. */
const statusText = (deployment: Deployment.Deployment) =>
  deployment.status_reason === undefined ? deployment.status : `${deployment.status} (${deployment.status_reason})`

const deploymentsTable = (deployments: ReadonlyArray<Deployment.Deployment>) =>
  Output.table([
    { header: "ID", value: (d) => d.id },
    { header: "ACCOUNT", value: (d) => d.account },
    { header: "AGENT", value: (d) => d.agent },
    { header: "BUILD", value: (d) => d.build_id },
    // The record's own status, as --json shows it (superseded and undeployed both end a deployment), with the cluster's reason.
    { header: "STATUS", value: (d) => statusText(d) },
    { header: "NAMESPACE", value: (d) => d.namespace },
    { header: "DEPLOYED", value: (d) => Output.date(d.deployed_at) },
    { header: "UNDEPLOYED", value: (d) => Output.date(d.undeployed_at) }
  ], deployments)

const one = (deployment: Deployment.Deployment) =>
  Output.fields([
    ["id", deployment.id],
    ["account", deployment.account],
    ["agent", deployment.agent],
    ["build", deployment.build_id],
    ["status", statusText(deployment)],
    ...(deployment.status_message === undefined ? [] : [["status message", deployment.status_message] as const]),
    ["namespace", deployment.namespace],
    ["deployed", Output.date(deployment.deployed_at)],
    ["undeployed", Output.date(deployment.undeployed_at)],
    ...(deployment.rolled_back_from === undefined ? [] : [["rolled back from", deployment.rolled_back_from] as const]),
    ...(deployment.follow === undefined ? [] : [["follows", Deployment.describeFollow(deployment.follow)] as const]),
    ...(deployment.rolled_forward_from === undefined ? [] : [["rolled forward from", deployment.rolled_forward_from] as const]),
    ["concurrent send", deployment.settings.concurrent_send],
    ...(deployment.env === undefined ? [] : [["env", envText(deployment.env)] as const]),
    ...(deployment.links === undefined ? [] : [["a2a card", deployment.links.a2a_card] as const])
  ])

const settingsFields = (settings: Deployment.DeploymentSettings) => Output.fields([["concurrent send", settings.concurrent_send]])

/** The env a deploy set, for people: `NAME=value`, a secret as `NAME=(secret SECRET)`. */
const envText = (env: Secret.EnvOverrides) =>
  Object.entries(env).map(([name, value]) => typeof value === "string" ? `${name}=${value}` : `${name}=(secret ${value.secret})`).join(" ")

/** `NAME=VALUE` of the repeated `--env` and `--env-secret` options, as the deploy's `env`. */
const envOf = (plain: ReadonlyArray<string>, secrets: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const env: Record<string, string | { secret: string }> = {}
    for (const [option, entries] of [["--env", plain], ["--env-secret", secrets]] as const) {
      for (const entry of entries) {
        const at = entry.indexOf("=")
        if (at < 1) return yield* usageError(`${option} takes NAME=${option === "--env" ? "value" : "SECRET"}, got "${entry}"`)
        const name = entry.slice(0, at)
        if (Object.hasOwn(env, name)) return yield* usageError(`${name} is given twice`)
        env[name] = option === "--env" ? entry.slice(at + 1) : { secret: entry.slice(at + 1) }
      }
    }
    return yield* Schema.decodeUnknown(Secret.EnvOverrides)(env).pipe(
      Effect.mapError((error) => usageError(`the env is not valid: ${SchemaIssues.formatParseError(error, "env")}`))
    )
  })

const history = Command.make("history", { agent: Arguments.agent }, ({ agent }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.deployments.history({ path: agent })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(deploymentsTable(found.deployments))
  })).pipe(Command.withDescription("Deployments of an agent made by your accounts, most recent first"))

const create = Command.make("create", {
  agent: Arguments.agentAtRange,
  buildId: Arguments.buildId.pipe(Options.optional),
  channel: Options.text("channel").pipe(
    Options.withDescription("Deploy the version a channel of the agent names (e.g. stable)"),
    Arguments.checked("--channel", Ids.ChannelName),
    Options.optional
  ),
  follow: Options.boolean("follow").pipe(
    Options.withDescription("Keep following the range or channel (or latest): roll forward when it moves")
  ),
  into: Options.text("into").pipe(
    Options.withDescription("The account that deploys (default: the agent's own)"),
    Arguments.checked("--into", Arguments.accountName),
    Options.optional
  ),
  env: Options.text("env").pipe(
    Options.withDescription("NAME=value: an environment variable over the spec's; repeatable"),
    Options.repeated
  ),
  envSecret: Options.text("env-secret").pipe(
    Options.withDescription("NAME=SECRET: an environment variable read from a secret of the deploying account; repeatable"),
    Options.repeated
  )
}, ({ agent, buildId, channel, env, envSecret, follow, into }) =>
  Effect.gen(function*() {
    const overrides = yield* envOf(env, envSecret)
    const session = yield* Session.current
    const payload = {
      ...Option.match(buildId, { onNone: () => ({}), onSome: (build_id) => ({ build_id }) }),
      ...(agent.version === undefined ? {} : { version: agent.version }),
      ...Option.match(channel, { onNone: () => ({}), onSome: (c) => ({ channel: c }) }),
      ...(follow ? { follow } : {}),
      ...Option.match(into, { onNone: () => ({}), onSome: (a) => ({ into: a }) }),
      ...(Object.keys(overrides).length === 0 ? {} : { env: overrides })
    }
    // What ran before, to say what the deploy superseded (the answer is the new deployment alone).
    const before = session.json ? [] : yield* session.client.deployments.history({ path: { account: agent.account, name: agent.name } }).pipe(
      Effect.map((found) => found.deployments),
      Effect.orElseSucceed(() => [])
    )
    const deployed = yield* session.client.deployments.deploy({ path: { account: agent.account, name: agent.name }, payload })
    if (session.json) return yield* Output.json(deployed)
    const following = deployed.follow === undefined ? "" : `, following its ${Deployment.describeFollow(deployed.follow)}`
    yield* Output.line(`Deployed ${deployed.agent} build ${deployed.build_id} as ${deployed.id}${following}.`)
    for (const old of before) {
      if (old.id !== deployed.id && old.undeployed_at === null && old.namespace === deployed.namespace) {
        yield* Output.line(`Superseded ${old.id} (build ${old.build_id}).`)
      }
    }
    yield* Output.line(one(deployed))
  })).pipe(
    Command.withDescription(
      "Deploy an agent: a build (--build-id), a version or semver range (acme/helper@1.0.0, acme/helper@^1.2), a channel " +
        "(--channel stable), or by default the latest published version; --follow keeps rolling forward (owner or admin)"
    )
  )

const get = Command.make("get", { deployment: Arguments.deployment }, ({ deployment }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.deployments.get({ path: { deploymentId: deployment } })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(one(found))
  })).pipe(Command.withDescription("Show one deployment"))

const settings = Command.make("settings", {
  deployment: Arguments.deployment,
  concurrentSend: Arguments.concurrentSend.pipe(
    Options.withDescription(
      "What a send does while a reply of its conversation streams: reject it (409), queue it, or interrupt the reply (the default)"
    ),
    Options.optional
  )
}, ({ concurrentSend, deployment }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    if (Option.isNone(concurrentSend)) {
      const found = yield* session.client.deployments.get({ path: { deploymentId: deployment } })
      if (session.json) return yield* Output.json(found.settings)
      return yield* Output.line(settingsFields(found.settings))
    }
    const set = yield* session.client.deployments.updateSettings({
      path: { deploymentId: deployment },
      payload: { concurrent_send: concurrentSend.value }
    })
    if (session.json) return yield* Output.json(set)
    yield* Output.line(`Set the settings of ${deployment}.`)
    yield* Output.line(settingsFields(set))
  })).pipe(
    Command.withDescription(
      "Show a deployment's settings, or change them with --concurrent-send reject|queue|interrupt (owner or admin)"
    )
  )

const remove = Command.make("delete", { deployment: Arguments.deployment }, ({ deployment }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const ended = yield* session.client.deployments.undeploy({ path: { deploymentId: deployment } })
    if (session.json) return yield* Output.json(ended)
    yield* Output.line(`Undeployed ${ended.id} (${ended.agent}).`)
  })).pipe(Command.withDescription("Undeploy: remove the cluster objects and end the deployment (owner or admin)"))

const rollback = Command.make("rollback", {
  deployment: Arguments.deployment,
  buildId: Arguments.buildId.pipe(Options.withDescription("A build of the deployment's history to return to"), Options.optional),
  version: Arguments.version("to-version").pipe(Options.withDescription("A version of the deployment's history to return to"), Options.optional)
}, ({ buildId, deployment, version }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const payload = {
      ...Option.match(buildId, { onNone: () => ({}), onSome: (build_id) => ({ build_id }) }),
      ...Option.match(version, { onNone: () => ({}), onSome: (v) => ({ version: v }) })
    }
    const made = yield* session.client.deployments.rollback({ path: { deploymentId: deployment }, payload })
    if (session.json) return yield* Output.json(made)
    yield* Output.line(`Rolled ${deployment} back to build ${made.build_id} as ${made.id}.`)
    yield* Output.line(one(made))
  })).pipe(
    Command.withDescription(
      "Return a deployment's namespace to the build it ran before, or to a build (--build-id) or version (--to-version) of its history (owner or admin)"
    )
  )

const kubernetesName = Schema.String.pipe(Schema.pattern(/^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$/, {
  message: () => "must be a Kubernetes name (lowercase letters, digits, - and .)"
}))

const configMap = Command.make("configmap", {
  namespace: Args.text({ name: "namespace" }).pipe(Args.withDescription("The deployment's namespace (see `hosting deployments get`)"), Arguments.checkedArg("namespace", kubernetesName)),
  name: Args.text({ name: "name" }).pipe(Args.withDescription("The ConfigMap's name"), Arguments.checkedArg("name", kubernetesName)),
  account: Arguments.ownerAccount
}, ({ account, name, namespace }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.deployments.configMap({ path: { namespace, cmname: name }, urlParams: { account } })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.table([
      { header: "KEY", value: (e) => e[0] },
      { header: "VALUE", value: (e) => e[1] }
    ], Object.entries(found.data)))
  })).pipe(Command.withDescription("The data of a ConfigMap in a deployment's namespace"))

const restart = Command.make("restart", {
  namespace: Args.text({ name: "namespace" }).pipe(Args.withDescription("The deployment's namespace (see `hosting deployments get`)"), Arguments.checkedArg("namespace", kubernetesName)),
  pod: Args.text({ name: "pod" }).pipe(Args.withDescription("The pod's name"), Arguments.checkedArg("pod", kubernetesName)),
  account: Arguments.ownerAccount
}, ({ account, namespace, pod }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const restarted = yield* session.client.deployments.restartPod({ path: { namespace, pod }, urlParams: { account } })
    if (session.json) return yield* Output.json(restarted)
    yield* Output.line(`Pod ${restarted.pod}: ${restarted.status}.`)
  })).pipe(Command.withDescription("Restart a pod of a deployment (the cluster recreates it)"))

export const command = Command.make("deployments").pipe(
  Command.withDescription("Deployments of agents"),
  Command.withSubcommands([history, create, get, settings, rollback, remove, configMap, restart])
)
