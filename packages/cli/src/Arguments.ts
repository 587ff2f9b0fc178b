/**
 * Arguments shared by the commands, validated with the API's own schemas
 * before any request is made (a bad one is a usage error, exit 1).
 */
import { Args, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Deployment, Ids } from "@hosting/core"
import { Effect, ParseResult, Schema } from "effect"

/** Why `raw` is not a `what`, in one sentence: `agent name "Helper" must be a slug: …`. */
const problem = (what: string, raw: unknown, error: ParseResult.ParseError) => {
  const messages = ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => i.message)
  const said = typeof raw === "string" ? `${what} "${raw}"` : what
  return messages.every((m) => m.startsWith("must"))
    ? `${said} ${messages.join("; ")}`
    : `${said}: ${messages.map((m) => m.charAt(0).toLowerCase() + m.slice(1)).join("; ")}`
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>, what: string) => (raw: I) =>
  Schema.decodeUnknown(schema)(raw).pipe(Effect.mapError((error) => HelpDoc.p(problem(what, raw, error))))

const decodeOption = <A, I>(schema: Schema.Schema<A, I>, what: string) => (raw: I) =>
  decodeWith(schema, what)(raw).pipe(Effect.mapError(ValidationError.invalidValue))

/**
 * Decodes an option's value with a schema, the error naming the option
 * (`--start "yesterday" must be an RFC 3339 date-time …`) where
 * `Options.withSchema` prints the schema's tree.
 */
export const checked = <A, I>(option: string, schema: Schema.Schema<A, I>) => (self: Options.Options<I>) =>
  Options.mapEffect(self, decodeOption(schema, option)) as Options.Options<A>

/** The same for a positional argument, named as its usage shows it (`<title>`). */
export const checkedArg = <A, I>(argument: string, schema: Schema.Schema<A, I>) => (self: Args.Args<I>) =>
  Args.mapEffect(self, decodeWith(schema, `<${argument}>`))

/** Names the argument in its errors: `<account/agent>: agent name "x" must be …`. */
const naming = (argument: string) => (error: HelpDoc.HelpDoc) =>
  HelpDoc.p(`<${argument}>: ${HelpDoc.toAnsiText(error).replace(/\u001b\[[0-9;]*m/g, "").trim()}`)

/** A conversation id or the start of one: hexadecimal digits and dashes. */
const conversationRef = Schema.String.pipe(Schema.pattern(/^[0-9a-f][0-9a-f-]{3,35}$/i, {
  message: () => "must be a conversation id or its first 4 or more characters"
}))

/** An agent named `<account>/<agent>`. */
export interface AgentRef {
  readonly account: Ids.AccountName
  readonly name: Ids.AgentName
}

const parseAgentRef = (raw: string) =>
  Effect.gen(function*() {
    const parts = raw.split("/")
    if (parts.length !== 2) return yield* Effect.fail(HelpDoc.p(`agent "${raw}" must be written <account>/<agent>, e.g. acme/helper`))
    const account = yield* decodeWith(Ids.AccountName, "account")(parts[0]!)
    const name = yield* decodeWith(Ids.AgentName, "agent name")(parts[1]!)
    const ref: AgentRef = { account, name }
    return ref
  })

/** An agent with a version (or, where a range may stand, a semver range), `<account>/<agent>@<version>`. */
export interface AgentAt<V = Ids.SemVer> extends AgentRef {
  readonly version: V | undefined
}

/** `<account>/<agent>@<what>`, `what` decoded by `decode`; `required` when the `@` part must be there. */
const agentWith = <V>(name: string, description: string, required: boolean, decode: (raw: string) => Effect.Effect<V, HelpDoc.HelpDoc>) =>
  Args.text({ name }).pipe(
    Args.withDescription(description),
    Args.mapEffect((raw) =>
      Effect.gen(function*() {
        const at = raw.lastIndexOf("@")
        if (at === -1 && required) {
          return yield* Effect.fail(HelpDoc.p(`"${raw}" needs a version: <account>/<agent>@<major.minor.patch>, e.g. acme/helper@1.0.0`))
        }
        const ref = yield* parseAgentRef(at === -1 ? raw : raw.slice(0, at))
        const version = at === -1 ? undefined : yield* decode(raw.slice(at + 1))
        const result: AgentAt<V> = { ...ref, version }
        return result
      }).pipe(Effect.mapError(naming(name)))
    )
  )

/**
 * `<account>/<agent>@<version>`, the version required or optional. (A
 * `--version` option cannot be: @effect/cli keeps that name for itself.)
 */
export const agentAt = (versionRequired: boolean) =>
  agentWith(
    versionRequired ? "account/agent@version" : "account/agent[@version]",
    versionRequired
      ? "The agent and the version, as <account>/<agent>@<major.minor.patch> (e.g. acme/helper@1.0.0)"
      : "The agent, as <account>/<agent>, optionally with a published version: acme/helper@1.0.0",
    versionRequired,
    decodeWith(Ids.SemVer, "version")
  )

/** `<account>/<agent>[@<version or range>]`: what a deploy may name (acme/helper@^1.2). */
export const agentAtRange = agentWith(
  "account/agent[@version-or-range]",
  "The agent, as <account>/<agent>, optionally with a published version or a semver range: acme/helper@1.0.0, " +
    "acme/helper@^1.2, 'acme/helper@>=1 <2'",
  false,
  decodeWith(Ids.VersionRange, "version or range")
)

/** `<account>/<agent>` as the first argument. */
export const agent = Args.text({ name: "account/agent" }).pipe(
  Args.withDescription("The agent, as <account>/<agent> (e.g. acme/helper)"),
  Args.mapEffect((raw) => parseAgentRef(raw).pipe(Effect.mapError(naming("account/agent"))))
)

/** An account name as a positional argument. */
export const account = (name = "account") =>
  Args.text({ name }).pipe(Args.withDescription("An account name"), Args.mapEffect(decodeWith(Ids.AccountName, "account")))

/** A user id as a positional argument. */
export const user = Args.text({ name: "user" }).pipe(
  Args.withDescription("A user id (see `hosting accounts members`)"),
  Args.mapEffect(decodeWith(Ids.UserId, "user"))
)

/** `--role` of a member: owner, admin or member. */
export const role = Options.choice("role", Ids.Role.literals).pipe(
  Options.withDescription("The role in the account: owner (everything), admin (builds, deployments, members) or member")
)

/**
 * A deployment as a command line names it: an id or the start of one, or
 * `<account>/<agent>` for its one live deployment (DeploymentRefs.resolve
 * finds which).
 */
export type DeploymentRef =
  | { readonly _tag: "Id"; readonly id: Deployment.DeploymentId }
  | { readonly _tag: "Agent"; readonly agent: AgentRef }

/** A deployment id, its first characters, or `<account>/<agent>`, as a positional argument. */
export const deployment = Args.text({ name: "deployment" }).pipe(
  Args.withDescription(
    "A deployment id (see `hosting deployments list`), its first characters, or <account>/<agent> for the agent's one live deployment"
  ),
  Args.mapEffect((raw): Effect.Effect<DeploymentRef, HelpDoc.HelpDoc> =>
    raw.includes("/")
      ? parseAgentRef(raw).pipe(Effect.map((agent) => ({ _tag: "Agent" as const, agent })), Effect.mapError(naming("deployment")))
      : decodeWith(Deployment.DeploymentId, "deployment")(raw).pipe(Effect.map((id) => ({ _tag: "Id" as const, id })))
  )
)

/** A conversation id, or its first characters (4 or more), as a positional argument; the command resolves a prefix. */
export const conversation = Args.text({ name: "conversation" }).pipe(
  Args.withDescription("A conversation id (a UUID v4), or its first characters as `hosting chat list` shows them"),
  Args.mapEffect(decodeWith(conversationRef, "<conversation>"))
)

/** `--account` of the ConfigMap and pod routes, which check that the namespace belongs to it. */
export const ownerAccount = Options.text("account").pipe(
  Options.withDescription("The account the deployment's namespace belongs to"),
  Options.mapEffect(decodeOption(Ids.AccountName, "--account"))
)

export const buildId = Options.text("build-id").pipe(
  Options.withDescription("The build id"),
  Options.mapEffect(decodeOption(Ids.BuildId, "--build-id"))
)

/** A semantic version under an option of its own name (`--version` alone is the CLI's own). */
export const version = (name: string) => Options.text(name).pipe(
  Options.withDescription("A semantic version"),
  Options.mapEffect(decodeOption(Ids.SemVer, `--${name}`))
)

/** What a send does while a reply of its conversation still streams (`--concurrent-send`). */
export const concurrentSend = Options.choice("concurrent-send", Deployment.ConcurrentSend.literals)

/** Parses a value the way the arguments are parsed, for values read elsewhere (stdin, files). */
export const decode = decodeWith

/** The schema of account names, for arguments that are account names under another label. */
export const accountName = Ids.AccountName
