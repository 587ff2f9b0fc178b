/**
 * `hosting secrets list|set|delete`: the secrets of an account. A value is
 * read from stdin (by default), a file or `--value`, so that it can stay out
 * of the shell's history; no command ever prints one (the API never answers
 * one).
 */
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import { Secret } from "@hosting/core"
import { Effect, Option, Schema } from "effect"
import * as Arguments from "./Arguments.js"
import { usageError } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

const secretName = Args.text({ name: "name" }).pipe(
  Args.withDescription("The secret's name: upper-case letters, digits and underscores (e.g. OPENAI_API_KEY)"),
  Arguments.checkedArg("name", Secret.SecretName)
)

const accountOption = Options.text("account").pipe(
  Options.withDescription("The account (default: your only account)"),
  Arguments.checked("--account", Arguments.accountName),
  Options.optional
)

/** The account named, or the caller's only one. */
const accountOf = (account: Option.Option<typeof Arguments.accountName.Type>) =>
  Effect.gen(function*() {
    if (Option.isSome(account)) return account.value
    const session = yield* Session.current
    const mine = (yield* session.client.accounts.me()).accounts
    if (mine.length === 1) return mine[0]!.name
    return yield* usageError(
      mine.length === 0 ? "you belong to no account" : `you belong to several accounts (${mine.map((a) => a.name).join(", ")}); say which with --account`
    )
  })

const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
})

const list = Command.make("list", { account: accountOption }, ({ account }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const name = yield* accountOf(account)
    const found = yield* session.client.accounts.secrets({ path: { account: name } })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.table([
      { header: "SECRET", value: (s) => s.name },
      { header: "CREATED", value: (s) => Output.date(s.created_at) },
      { header: "UPDATED", value: (s) => Output.date(s.updated_at) }
    ], found.secrets))
  })).pipe(Command.withDescription("The account's secrets: names and times, never values (members)"))

const set = Command.make("set", {
  name: secretName,
  account: accountOption,
  value: Options.text("value").pipe(
    Options.withDescription("The value (it stays in your shell's history: prefer stdin or --from-file)"),
    Options.optional
  ),
  fromFile: Options.file("from-file", { exists: "yes" }).pipe(
    Options.withDescription("Read the value from this file, as it is"),
    Options.optional
  )
}, ({ account, fromFile, name, value }) =>
  Effect.gen(function*() {
    if (Option.isSome(value) && Option.isSome(fromFile)) return yield* usageError("give the value with one of --value, --from-file or stdin")
    const text = Option.isSome(value)
      ? value.value
      : Option.isSome(fromFile)
      ? yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(fromFile.value)).pipe(
        Effect.mapError(() => usageError(`cannot read the file ${fromFile.value}`, "file_unreadable"))
      )
      : yield* Effect.zipRight(
        process.stdin.isTTY ? Output.note("Type the value, then Ctrl-D (it is not shown again):") : Effect.void,
        // One line ending typed or piped (`echo "$KEY" | hosting secrets set NAME`) is not part of the value.
        Effect.map(readStdin, (read) => read.replace(/\r?\n$/, ""))
      )
    if (!Schema.is(Secret.SecretValue)(text)) {
      return yield* usageError(`the value must be 1 to ${Secret.maxSecretBytes} bytes of text without NUL`)
    }
    const session = yield* Session.current
    const target = yield* accountOf(account)
    const result = yield* session.client.accounts.setSecret({ path: { account: target, secret: name }, payload: { value: text } })
    if (session.json) return yield* Output.json(result)
    yield* Output.line(
      `${result.created ? "Created" : "Changed"} the secret ${result.name} of ${target}. ` +
        "Running deployments keep the value they were deployed with; deploy again to use this one."
    )
  })).pipe(
    Command.withDescription(
      "Set a secret of an account (owner or admin): the value from stdin (by default), --from-file or --value; it is never shown again"
    )
  )

const remove = Command.make("delete", { name: secretName, account: accountOption }, ({ account, name }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const target = yield* accountOf(account)
    const result = yield* session.client.accounts.removeSecret({ path: { account: target, secret: name } })
    if (session.json) return yield* Output.json(result)
    yield* Output.line(`${result.message}`)
  })).pipe(Command.withDescription("Delete a secret of an account (owner or admin)"))

export const command = Command.make("secrets").pipe(
  Command.withDescription("Secrets of an account, which deployments read as environment variables"),
  Command.withSubcommands([list, set, remove])
)
