/**
 * `hosting agents list|get|register|publish|yank|unyank|channels|config`: the catalog
 * and its releases.
 */
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import { type Agent, Ids } from "@hosting/core"
import { Effect, Option, Schema } from "effect"
import * as Arguments from "./Arguments.js"
import { usageError } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

const readText = (path: string, what: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError(() => usageError(`cannot read the ${what} file ${path}`, "file_unreadable"))
  )

const warningsTable = (warnings: ReadonlyArray<Agent.ValidationWarning>) =>
  Output.table([
    { header: "WARNING", value: (w) => w.code },
    { header: "PATH", value: (w) => w.path },
    { header: "MESSAGE", value: (w) => w.message }
  ], warnings)

const list = Command.make("list", {
  query: Options.text("query").pipe(Options.withAlias("q"), Options.withDescription("Words to look for"), Options.optional),
  limit: Options.integer("limit").pipe(
    Arguments.checked("--limit", Schema.Number.pipe(Schema.between(1, 200))),
    Options.withDescription("Agents per page, 1 to 200"),
    Options.withDefault(50)
  ),
  offset: Options.integer("offset").pipe(
    Options.withDescription("Agents to skip (default 0)"),
    Arguments.checked("--offset", Schema.NonNegative),
    Options.withDefault(0)
  )
}, ({ limit, offset, query }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const page = yield* session.client.publicAgents.list({
      urlParams: Option.match(query, { onNone: () => ({ limit, offset }), onSome: (q) => ({ q, limit, offset }) })
    })
    if (session.json) return yield* Output.json(page)
    yield* Output.line(Output.table([
      { header: "AGENT", value: (a) => `${a.account}/${a.name}` },
      { header: "VERSION", value: (a) => a.latest_version },
      { header: "PUBLISHED", value: (a) => Output.date(a.published_at) },
      { header: "DESCRIPTION", value: (a) => Output.cut(a.description ?? "") }
    ], page.agents))
    if (page.total > page.agents.length) {
      yield* Output.line(`${page.offset + 1}-${page.offset + page.agents.length} of ${page.total}`)
    }
  })).pipe(Command.withDescription("List the public catalog: agents with a published version"))

const get = Command.make("get", { agent: Arguments.agent }, ({ agent }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.publicAgents.get({ path: agent })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.fields([["agent", `${found.account}/${found.name}`], ["registry", found.registry]]))
    yield* Output.line("")
    yield* Output.line(Output.table([
      { header: "BUILD", value: (v) => v.build_id },
      { header: "VERSION", value: (v) => v.version ?? "-" },
      { header: "PUBLISHED", value: (v) => Output.date(v.published_at) },
      { header: "YANKED", value: (v) => (v.yanked === undefined ? "-" : Output.cut(v.yanked.reason)) },
      { header: "REGISTERED", value: (v) => Output.date(v.registered_at) },
      { header: "WARNINGS", value: (v) => String(v.validation_warnings.length), right: true }
    ], found.versions))
  })).pipe(Command.withDescription("Show an agent and its versions (every build for members of its account)"))

const register = Command.make("register", {
  agent: Arguments.agent,
  buildId: Arguments.buildId,
  registry: Options.text("registry").pipe(Options.withDescription("The OCI registry of the build's image, e.g. ghcr.io/acme")),
  spec: Options.file("spec", { exists: "yes" }).pipe(Options.withDescription("The agent spec (YAML) file")),
  readme: Options.file("readme", { exists: "yes" }).pipe(Options.withDescription("A README (Markdown) file"), Options.optional)
}, ({ agent, buildId, readme, registry, spec }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const spec_content = yield* readText(spec, "spec")
    const readmeText = Option.isSome(readme) ? yield* readText(readme.value, "readme") : undefined
    const registered = yield* session.client.agents.register({
      path: agent,
      payload: readmeText === undefined
        ? { build_id: buildId, registry, spec_content }
        : { build_id: buildId, registry, spec_content, readme: readmeText }
    })
    if (session.json) return yield* Output.json(registered)
    yield* Output.line(`Registered ${registered.account}/${registered.name} build ${registered.build_id}.`)
    if (registered.validation_warnings.length > 0) yield* Output.line(warningsTable(registered.validation_warnings))
  })).pipe(Command.withDescription("Register a build of an agent, or update it (owner or admin)"))

const publish = Command.make("publish", { agent: Arguments.agentAt(true), buildId: Arguments.buildId }, ({ agent, buildId }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const published = yield* session.client.agents.publish({
      path: { account: agent.account, name: agent.name },
      payload: { build_id: buildId, version: agent.version! }
    })
    if (session.json) return yield* Output.json(published)
    yield* Output.line(`Published ${published.account}/${published.name} build ${published.build_id} as ${published.version}.`)
  })).pipe(Command.withDescription("Give a build a semantic version: it appears in the public catalog (owner or admin)"))

/** One version, as yank and unyank show it. */
const versionLine = (agent: Arguments.AgentRef, version: Agent.Version) =>
  version.yanked === undefined
    ? `${agent.account}/${agent.name}@${version.version} (build ${version.build_id}) is not yanked.`
    : `${agent.account}/${agent.name}@${version.version} (build ${version.build_id}) is yanked: ${version.yanked.reason}`

const yank = Command.make("yank", {
  agent: Arguments.agentAt(true),
  reason: Options.text("reason").pipe(Options.withDescription("Why the version is withdrawn; the catalog shows it beside the version"))
}, ({ agent, reason }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const yanked = yield* session.client.agents.yank({ path: { account: agent.account, name: agent.name, version: agent.version! }, payload: { reason } })
    if (session.json) return yield* Output.json(yanked)
    yield* Output.line(versionLine(agent, yanked))
    yield* Output.line("Ranges and latest now pass it by; deployments running it keep running and are told.")
  })).pipe(Command.withDescription("Withdraw a published version: ranges, channels and latest skip it (owner or admin)"))

const unyank = Command.make("unyank", { agent: Arguments.agentAt(true) }, ({ agent }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const restored = yield* session.client.agents.unyank({ path: { account: agent.account, name: agent.name, version: agent.version! } })
    if (session.json) return yield* Output.json(restored)
    yield* Output.line(versionLine(agent, restored))
  })).pipe(Command.withDescription("Undo a yank (owner or admin)"))

const channelsTable = (channels: ReadonlyArray<Agent.Channel>) =>
  Output.table([
    { header: "CHANNEL", value: (c) => c.name },
    { header: "VERSION", value: (c) => c.version },
    { header: "BUILD", value: (c) => c.build_id },
    { header: "UPDATED", value: (c) => (c.implicit ? "(implicit)" : Output.date(c.updated_at)) },
    { header: "YANKED", value: (c) => (c.yanked === undefined ? "-" : Output.cut(c.yanked.reason)) }
  ], channels)

const channelName = Args.text({ name: "channel" }).pipe(
  Args.withDescription("A channel name: lowercase letters, digits and hyphens (e.g. stable)"),
  Arguments.checkedArg("channel", Ids.ChannelName)
)

const channelsList = Command.make("list", { agent: Arguments.agent }, ({ agent }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.publicAgents.channels({ path: agent })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(channelsTable(found.channels))
  })).pipe(Command.withDescription("An agent's channels and the versions they name; latest is implicit"))

const channelsSet = Command.make("set", { agent: Arguments.agentAt(true), channel: channelName }, ({ agent, channel }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const set = yield* session.client.agents.setChannel({
      path: { account: agent.account, name: agent.name, channel },
      payload: { version: agent.version! }
    })
    if (session.json) return yield* Output.json(set)
    yield* Output.line(`Channel ${set.name} of ${agent.account}/${agent.name} names ${set.version} (build ${set.build_id}).`)
  })).pipe(Command.withDescription("Point a channel at a published version; deployments following it roll forward (owner or admin)"))

const channelsDelete = Command.make("delete", { agent: Arguments.agent, channel: channelName }, ({ agent, channel }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const removed = yield* session.client.agents.removeChannel({ path: { ...agent, channel } })
    if (session.json) return yield* Output.json(removed)
    yield* Output.line(`${removed.message}.`)
  })).pipe(Command.withDescription("Remove a channel; deployments that followed it keep running (owner or admin)"))

const channels = Command.make("channels").pipe(
  Command.withDescription("Release channels: named pointers to published versions, like npm's dist-tags"),
  Command.withSubcommands([channelsList, channelsSet, channelsDelete])
)

const config = Command.make("config", { agent: Arguments.agent }, ({ agent }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.agents.config({ path: agent })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.fields([
      ["agent", `${found.account}/${found.name}`],
      ["build", found.build_id],
      ["version", found.version ?? "-"],
      ["image", found.image],
      ["registry", found.registry]
    ]))
    const env = Object.entries(found.env)
    if (env.length > 0) {
      yield* Output.line("")
      yield* Output.line(Output.table([{ header: "ENV", value: (e) => e[0] }, { header: "VALUE", value: (e) => e[1] }], env))
    }
  })).pipe(Command.withDescription("What deploying the latest build needs: image, environment, spec"))

export const command = Command.make("agents").pipe(
  Command.withDescription("The agent catalog"),
  Command.withSubcommands([list, get, register, publish, yank, unyank, channels, config])
)
