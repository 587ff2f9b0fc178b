/**
 * `hosting setup` (the first user of a new instance, with the setup code the
 * server printed) and `hosting tokens create|list|revoke` (personal access
 * tokens for scripts and CI).
 */
import { Args, Command, Options } from "@effect/cli"
import { HostingClient } from "@hosting/client"
import { Ids, Token } from "@hosting/core"
import { type DateTime, Effect, Option, Schema } from "effect"
import * as Arguments from "./Arguments.js"
import * as Output from "./Output.js"
import * as Profiles from "./Profiles.js"
import * as Session from "./Session.js"

export const setup = Command.make("setup", {
  code: Options.text("code").pipe(
    Options.withDescription("The setup code the server printed at its first start (also in its setup-code file)")
  ),
  user: Options.text("user").pipe(
    Options.withDescription("Your user id: letters, digits and . _ @ - (used in member commands)"),
    Arguments.checked("--user", Ids.UserId)
  ),
  name: Options.text("name").pipe(Options.withDescription("Your display name (default: the user id)"), Options.optional)
}, ({ code, name, user }) =>
  Effect.gen(function*() {
    const session = yield* Session.creating
    // Setting up needs no token; an old one is not sent along.
    const anonymous = yield* HostingClient.make({ baseUrl: session.baseUrl })
    const made = yield* anonymous.setup.complete({
      payload: { code, user_id: user, ...(Option.isSome(name) ? { name: name.value } : {}) }
    })
    yield* Profiles.update(session.profile, (profile) => ({ ...profile, base_url: session.baseUrl, token: made.token }))
    if (session.json) return yield* Output.json({ profile: session.profile, base_url: session.baseUrl, ...made })
    yield* Output.line(
      `Set up ${session.baseUrl}: you are ${made.user.name} (${made.user.id}), its administrator; ` +
        `your token is saved in profile "${session.profile}".`
    )
    yield* Output.line("Next: `hosting accounts create <name>` makes an account you own.")
  })).pipe(Command.withDescription("Make the first user of a new instance with its setup code, and sign in as them"))

const tokenColumns: ReadonlyArray<
  Output.Column<{
    readonly id: string
    readonly name: string
    readonly scopes: ReadonlyArray<string>
    readonly accounts: ReadonlyArray<string> | null
    readonly expires_at: DateTime.Utc | null
    readonly last_used_at: DateTime.Utc | null
  }>
> = [
  { header: "ID", value: (t) => t.id },
  { header: "NAME", value: (t) => t.name },
  { header: "SCOPES", value: (t) => t.scopes.join(",") },
  { header: "ACCOUNTS", value: (t) => t.accounts === null ? "all" : t.accounts.join(",") },
  { header: "EXPIRES", value: (t) => t.expires_at === null ? "never" : Output.date(t.expires_at) },
  { header: "LAST USED", value: (t) => t.last_used_at === null ? "never" : Output.date(t.last_used_at) }
]

const create = Command.make("create", {
  name: Args.text({ name: "name" }).pipe(Args.withDescription("What the token is for, e.g. ci or laptop")),
  scopes: Options.choice("scope", Token.allScopes).pipe(
    Options.withDescription("A scope the token gets; repeatable: read, chat, publish, deploy, admin (default: read)"),
    Options.repeated
  ),
  accounts: Options.text("account").pipe(
    Options.withDescription("An account the token may reach; repeatable (default: all of yours)"),
    Options.repeated,
    Arguments.checked("--account", Schema.mutable(Schema.Array(Arguments.accountName)))
  ),
  days: Options.integer("expires-in-days").pipe(
    Options.withDescription("Days until the token expires, 1 to 366 (default 30)"),
    Options.optional
  )
}, ({ accounts, days, name, scopes }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const made = yield* session.client.tokens.create({
      payload: {
        name,
        scopes: scopes.length === 0 ? ["read"] : scopes,
        ...(accounts.length === 0 ? {} : { accounts }),
        ...(Option.isSome(days) ? { expires_in: days.value * 86_400 } : {})
      }
    })
    if (session.json) return yield* Output.json(made)
    yield* Output.line(made.token)
    yield* Output.note(
      `Token ${made.id} (${made.name}): ${made.scopes.join(", ")}` +
        `${made.accounts === null ? "" : ` on ${made.accounts.join(", ")}`}, expires ${Output.date(made.expires_at)}. ` +
        "It is shown only now: keep it somewhere safe."
    )
  })).pipe(Command.withDescription("Make a personal access token; it is printed once, on stdout"))

const list = Command.make("list", {}, () =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const { tokens } = yield* session.client.tokens.list()
    if (session.json) return yield* Output.json(tokens)
    yield* Output.line(Output.table(tokenColumns, tokens))
  })).pipe(Command.withDescription("List your personal access tokens (never their secrets), with their last use"))

const revoke = Command.make("revoke", {
  id: Args.text({ name: "id" }).pipe(Args.withDescription("The token's id (see `hosting tokens list`)"))
}, ({ id }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const revoked = yield* session.client.tokens.revoke({ path: { tokenId: id } })
    if (session.json) return yield* Output.json(revoked)
    yield* Output.line(`Revoked token ${revoked.id}.`)
  })).pipe(Command.withDescription("Revoke one of your personal access tokens"))

export const command = Command.make("tokens").pipe(
  Command.withDescription("Personal access tokens for scripts and CI"),
  Command.withSubcommands([create, list, revoke])
)
