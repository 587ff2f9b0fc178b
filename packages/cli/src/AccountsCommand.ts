/**
 * `hosting me` and `hosting accounts get|rename|create|delete|members|invite|invitations|accept|audit`.
 */
import { Args, Command, Options } from "@effect/cli"
import { Audit } from "@hosting/core"
import { Effect, Option, Schema } from "effect"
import * as Arguments from "./Arguments.js"
import { usageError } from "./ExitCode.js"
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

/** `me`'s identity line alone, for prompts and scripts: `Alice (alice)`. */
export const whoami = Command.make("whoami", {}, () =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const profile = yield* session.client.accounts.me()
    if (session.json) return yield* Output.json(profile.user)
    yield* Output.line(`${profile.user.name} (${profile.user.id})`)
  })).pipe(Command.withDescription("Who you are signed in as, in one line (the user line of `hosting me`)"))

const memberColumns: ReadonlyArray<Output.Column<{ readonly user_id: string; readonly name: string; readonly role: string }>> = [
  { header: "MEMBER", value: (m) => m.user_id },
  { header: "NAME", value: (m) => m.name },
  { header: "ROLE", value: (m) => m.role }
]

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
    yield* Output.line(Output.table(memberColumns, found.members))
  })).pipe(Command.withDescription("Show an account and its members (members only)"))

const rename = Command.make("rename", {
  account: Arguments.account(),
  name: Args.text({ name: "new-name" }).pipe(Args.withDescription("The account's new name (lowercase letters, digits and dashes)"), Arguments.checkedArg("new-name", Arguments.accountName))
}, ({ account, name }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const renamed = yield* session.client.accounts.rename({ path: { account }, payload: { name } })
    if (session.json) return yield* Output.json(renamed)
    yield* Output.line(`Renamed ${account} to ${renamed.name}.`)
  })).pipe(Command.withDescription("Rename an account (owner or admin)"))

const create = Command.make("create", {
  name: Args.text({ name: "name" }).pipe(
    Args.withDescription("The new account's name (lowercase letters, digits and dashes)"),
    Arguments.checkedArg("name", Arguments.accountName)
  )
}, ({ name }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const created = yield* session.client.accounts.create({ payload: { name } })
    if (session.json) return yield* Output.json(created)
    yield* Output.line(`Created account ${created.name}; you are its owner.`)
  })).pipe(Command.withDescription("Create an account; you become its owner"))

const remove = Command.make("delete", {
  account: Arguments.account(),
  yes: Options.boolean("yes").pipe(Options.withDescription("Confirm: the account and everything of it are deleted for good"))
}, ({ account, yes }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    if (!yes) {
      return yield* usageError(
        `deleting ${account} removes its members, agents, builds, deployments, conversations, files and traces for good; ` +
          "run again with --yes to confirm"
      )
    }
    const deleted = yield* session.client.accounts.remove({ path: { account } })
    if (session.json) return yield* Output.json(deleted)
    yield* Output.line(deleted.message)
  })).pipe(Command.withDescription("Delete an account and everything of it (owners; nothing of it may be deployed)"))

const membersList = Command.make("list", { account: Arguments.account() }, ({ account }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const { members } = yield* session.client.accounts.members({ path: { account } })
    if (session.json) return yield* Output.json(members)
    yield* Output.line(Output.table(memberColumns, members))
  })).pipe(Command.withDescription("List an account's members and their roles (members only)"))

const membersSet = Command.make("set", { account: Arguments.account(), user: Arguments.user, role: Arguments.role }, ({ account, role, user }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const result = yield* session.client.accounts.setMember({ path: { account, user }, payload: { role } })
    if (session.json) return yield* Output.json(result)
    yield* Output.line(
      result.added
        ? `Added ${result.name} (${result.user_id}) to ${account} as ${result.role}.`
        : `${result.name} (${result.user_id}) is ${result.role} in ${account}.`
    )
  })).pipe(Command.withDescription("Add a user to an account or change their role (owners: any role; admins: members)"))

const membersRemove = Command.make("remove", { account: Arguments.account(), user: Arguments.user }, ({ account, user }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const result = yield* session.client.accounts.removeMember({ path: { account, user } })
    if (session.json) return yield* Output.json(result)
    yield* Output.line(`Removed ${result.user_id} from ${account}.`)
  })).pipe(Command.withDescription("Remove a member (owners: anyone; admins: members; anyone: themself)"))

const members = Command.make("members").pipe(
  Command.withDescription("An account's members"),
  Command.withSubcommands([membersList, membersSet, membersRemove])
)

const invite = Command.make("invite", {
  account: Arguments.account(),
  role: Arguments.role,
  email: Options.text("email").pipe(Options.withDescription("Whom the invitation is for (shown with it)"), Options.optional)
}, ({ account, email, role }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const made = yield* session.client.accounts.invite({
      path: { account },
      payload: { role, ...(Option.isSome(email) ? { email: email.value } : {}) }
    })
    if (session.json) return yield* Output.json(made)
    yield* Output.line(made.url)
    yield* Output.note(
      `Invitation ${made.id} to ${account} as ${made.role}${made.email === null ? "" : ` for ${made.email}`}, ` +
        `valid until ${Output.date(made.expires_at)}. Send the link (or \`hosting accounts accept ${made.code}\`); ` +
        "the code is shown only now."
    )
  })).pipe(Command.withDescription("Invite someone: prints a one-time link (owners: any role; admins: members)"))

const invitationsList = Command.make("list", { account: Arguments.account() }, ({ account }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const { invitations } = yield* session.client.accounts.invitations({ path: { account } })
    if (session.json) return yield* Output.json(invitations)
    yield* Output.line(Output.table([
      { header: "ID", value: (i) => i.id },
      { header: "ROLE", value: (i) => i.role },
      { header: "EMAIL", value: (i) => i.email ?? "-" },
      { header: "BY", value: (i) => i.created_by },
      { header: "EXPIRES", value: (i) => Output.date(i.expires_at) }
    ], invitations))
  })).pipe(Command.withDescription("List an account's invitations still waiting (owners and admins)"))

const invitationsWithdraw = Command.make("withdraw", {
  account: Arguments.account(),
  id: Args.text({ name: "id" }).pipe(Args.withDescription("The invitation's id (see `hosting accounts invitations list`)"))
}, ({ account, id }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const withdrawn = yield* session.client.accounts.withdraw({ path: { account, invitationId: id } })
    if (session.json) return yield* Output.json(withdrawn)
    yield* Output.line(`Withdrew invitation ${withdrawn.id} to ${account}.`)
  })).pipe(Command.withDescription("Withdraw an invitation (owners and admins)"))

const invitations = Command.make("invitations").pipe(
  Command.withDescription("An account's invitations"),
  Command.withSubcommands([invitationsList, invitationsWithdraw])
)

/** The code of an invitation given as its code or as its link (`…/invitations/<code>`). */
export const invitationCode = (input: string): string => {
  const trimmed = input.trim()
  const inLink = /\/invitations\/([^/?#]+)\/?(?:[?#].*)?$/.exec(trimmed)
  return inLink === null ? trimmed : decodeURIComponent(inLink[1]!)
}

const accept = Command.make("accept", {
  code: Args.text({ name: "code-or-link" }).pipe(Args.withDescription("The invitation's code, or the link it came as"))
}, ({ code }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const joined = yield* session.client.accounts.accept({ path: { code: invitationCode(code) } })
    if (session.json) return yield* Output.json(joined)
    yield* Output.line(`Joined ${joined.account} as ${joined.role}.`)
  })).pipe(Command.withDescription("Accept an invitation: join its account with its role"))

const auditLog = Command.make("audit", {
  account: Arguments.account(),
  limit: Options.integer("limit").pipe(
    Options.withDescription(`Entries per page, 1 to ${Audit.maxPageSize} (default ${Audit.defaultPageSize})`),
    Arguments.checked("--limit", Schema.Number.pipe(Schema.between(1, Audit.maxPageSize))),
    Options.optional
  ),
  offset: Options.integer("offset").pipe(Options.withDescription("Entries to skip"), Arguments.checked("--offset", Schema.NonNegative), Options.optional)
}, ({ account, limit, offset }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const page = yield* session.client.accounts.audit({
      path: { account },
      urlParams: {
        ...(Option.isSome(limit) ? { limit: limit.value } : {}),
        ...(Option.isSome(offset) ? { offset: offset.value } : {})
      }
    })
    if (session.json) return yield* Output.json(page)
    yield* Output.line(Output.table([
      { header: "WHEN", value: (e) => Output.date(e.at) },
      { header: "WHO", value: (e) => e.actor },
      { header: "ACTION", value: (e) => e.action },
      { header: "DETAILS", value: (e) => e.details }
    ], page.entries))
    if (page.offset + page.entries.length < page.total) {
      yield* Output.note(`${page.entries.length} of ${page.total}; more with --offset ${page.offset + page.entries.length}`)
    }
  })).pipe(Command.withDescription("The account's audit log, newest first (owners and admins)"))

export const command = Command.make("accounts").pipe(
  Command.withDescription("Accounts"),
  Command.withSubcommands([get, rename, create, remove, members, invite, invitations, accept, auditLog])
)
