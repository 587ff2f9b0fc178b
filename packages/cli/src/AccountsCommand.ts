/**
 * `hosting me` and `hosting accounts get|rename`.
 */
import { Args, Command } from "@effect/cli"
import { Effect } from "effect"
import * as Arguments from "./Arguments.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

export const me = Command.make("me", {}, () =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const profile = yield* session.client.accounts.me()
    if (session.json) return yield* Output.json(profile)
    yield* Output.line(Output.fields([["user", `${profile.user.name} (${profile.user.id})`], ["server", session.baseUrl]]))
    yield* Output.line("")
    yield* Output.line(Output.table([
      { header: "ACCOUNT", value: (a) => a.name },
      { header: "ROLE", value: (a) => a.role }
    ], profile.accounts))
  })).pipe(Command.withDescription("Who you are signed in as, and your accounts"))

const get = Command.make("get", { account: Arguments.account() }, ({ account }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const found = yield* session.client.accounts.get({ path: { account } })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.fields([
      ["account", found.name],
      ["created", Output.date(found.created_at)],
      ["your role", found.role]
    ]))
    yield* Output.line("")
    yield* Output.line(Output.table([
      { header: "MEMBER", value: (m) => m.user_id },
      { header: "NAME", value: (m) => m.name },
      { header: "ROLE", value: (m) => m.role }
    ], found.members))
  })).pipe(Command.withDescription("Show an account and its members (members only)"))

const rename = Command.make("rename", {
  account: Arguments.account(),
  name: Args.text({ name: "new-name" }).pipe(Args.mapEffect(Arguments.decode(Arguments.accountName, "new name")))
}, ({ account, name }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const renamed = yield* session.client.accounts.rename({ path: { account }, payload: { name } })
    if (session.json) return yield* Output.json(renamed)
    yield* Output.line(`Renamed ${account} to ${renamed.name}.`)
  })).pipe(Command.withDescription("Rename an account (owner or admin)"))

export const command = Command.make("accounts").pipe(
  Command.withDescription("Accounts"),
  Command.withSubcommands([get, rename])
)
