/**
 * The `hosting` command line: every command, the run, the error report and
 * the exit code.
 */
import { Command, HelpDoc, ValidationError } from "@effect/cli"
// Deep imports: the package index loads every Node module of the platform, which slows down each start.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { ClientError } from "@hosting/client"
import { Cause, Console, Effect, Exit, Layer } from "effect"
import * as AccountsCommand from "./AccountsCommand.js"
import * as AgentsCommand from "./AgentsCommand.js"
import * as AuthCommand from "./AuthCommand.js"
import * as ChatCommand from "./ChatCommand.js"
import * as CommandLine from "./CommandLine.js"
import * as Completions from "./Completions.js"
import * as DeploymentsCommand from "./DeploymentsCommand.js"
import * as EventsCommand from "./EventsCommand.js"
import * as ExitCode from "./ExitCode.js"
import * as FilesCommand from "./FilesCommand.js"
import * as Help from "./Help.js"
import * as Output from "./Output.js"
import * as Profiles from "./Profiles.js"
import * as SecretsCommand from "./SecretsCommand.js"
import * as Session from "./Session.js"
import * as TokensCommand from "./TokensCommand.js"
import * as TracesCommand from "./TracesCommand.js"
import * as Version from "./Version.js"

/** The version `hosting --version` prints (the package's). */
export const version = Version.version

export const command = Session.root.pipe(
  Command.withDescription("The command line of the agent hosting service"),
  Command.withSubcommands([
    AuthCommand.login,
    AuthCommand.logout,
    TokensCommand.setup,
    AccountsCommand.me,
    AccountsCommand.whoami,
    AccountsCommand.command,
    SecretsCommand.command,
    TokensCommand.command,
    AgentsCommand.command,
    DeploymentsCommand.command,
    ChatCommand.command,
    FilesCommand.command,
    TracesCommand.command,
    EventsCommand.command
  ])
)

const run = Command.run(command, { name: "hosting", version })

/** The code of an @effect/cli parse error, for `error: <sentence> (<code>)`. */
const codeOf = (error: ValidationError.ValidationError): string => {
  switch (error._tag) {
    case "InvalidArgument":
      return "invalid_argument"
    case "InvalidValue":
    case "MultipleValuesDetected":
      return "invalid_value"
    case "MissingValue":
      return "missing_value"
    case "MissingFlag":
      return "missing_option"
    case "CorrectedFlag":
      return "unknown_option"
    case "CommandMismatch":
      return "unknown_command"
    case "MissingSubcommand":
      return "missing_command"
    default:
      return "invalid_usage"
  }
}

const plain = (doc: HelpDoc.HelpDoc) => HelpDoc.toAnsiText(doc).replace(/\u001b\[[0-9;]*m/g, "").replace(/\s+/g, " ").trim()

/** An @effect/cli parse error as a CLI failure: one sentence naming the argument or option, and the command. */
const ofValidation = (error: ValidationError.ValidationError, command: string): ExitCode.CliFailure => {
  const text = plain(error.error)
  const hint = `see \`${command} --help\``
  const missingArgument = /^Missing argument <(.+?)>/.exec(text)
  if (missingArgument) return ExitCode.usageError(`"${command}" needs the argument <${missingArgument[1]}>`, "missing_argument", hint)
  const missingOption = /^Expected to find option: '(.+)'$/.exec(text)
  if (missingOption) return ExitCode.usageError(`"${command}" needs the option ${missingOption[1]}`, "missing_option", hint)
  const unexpected = /^Received unknown argument: '(.*)'$/.exec(text)
  if (unexpected) return ExitCode.usageError(`unexpected argument "${unexpected[1]}" for "${command}"`, "unexpected_argument", hint)
  return ExitCode.usageError(text, codeOf(error), hint)
}

/** Prints a failure as `error: <details> (<code>)` (and a hint line, if any) on stderr and answers its exit code. */
export const report = (error: unknown, command = "hosting"): Effect.Effect<number> =>
  Effect.gen(function*() {
    if (ValidationError.isValidationError(error)) return yield* report(ofValidation(error, command))
    if (error instanceof ExitCode.CliFailure) {
      yield* Output.note(`error: ${error.details} (${error.error})`)
      if (error.hint !== undefined) yield* Output.note(`hint: ${error.hint}`)
      return error.exitCode
    }
    const problem = yield* ClientError.describe(error)
    const session = Session.resolved.current
    // Without a token, what the server says (a missing bearer token) is better said as what it means.
    const details = problem.status === 401 && session?.token === undefined ? `not signed in to ${session?.baseUrl ?? "the server"}` : problem.details
    yield* Output.note(`error: ${details} (${problem.error})`)
    if (problem.status === 401) {
      const login = session === undefined || session.profile === Profiles.defaultProfile ? "hosting login" : `hosting login --profile ${session.profile}`
      yield* Output.note(`hint: sign in with \`${login}\`, or pass --token / set HOSTING_TOKEN`)
    }
    return ExitCode.ofProblem(problem)
  })

/**
 * What the CLI runs on: Node's file system, paths, terminal and HTTP client
 * (which sends streamed uploads with their length); not the whole
 * NodeContext, whose command executor and workers no command uses.
 */
export const layer = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer, NodeHttpClient.layer)

/**
 * Runs the CLI on `argv` (as `process.argv`: node, script, arguments) and
 * answers the exit code; nothing fails. Global options may stand anywhere.
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<number> => {
  const args = Session.hoistGlobals(argv.slice(2))
  const checked = CommandLine.check(tree(), args)
  const command = CommandLine.pathOf(tree(), args)
  const parsed = checked === undefined
    ? Console.consoleWith((console) =>
      Console.withConsole(run([...argv.slice(0, 2), ...args]), {
        ...console,
        // @effect/cli prints its parse errors on the console's stderr in its own words: report prints them in ours instead.
        error: () => Effect.void,
        // What it prints on stdout is help (and completion scripts): polished, and plain unless on a terminal.
        log: (...texts) =>
          console.log(...texts.map((t) => (typeof t === "string" ? Completions.repair(Help.polish(t, command.split(" ")), valued()) : t)))
      })
    )
    : Effect.fail(checked)
  return parsed.pipe(
    Effect.as(ExitCode.ok),
    Effect.catchAll((error) => report(error, command)),
    Effect.catchAllDefect((defect) =>
      Output.note(`error: ${defect instanceof Error ? defect.message : String(defect)} (internal_error)`).pipe(Effect.as(ExitCode.server))
    ),
    Effect.provide(layer)
  )
}

let cachedTree: CommandLine.Node | undefined
/** The command tree, read once. */
const tree = () => (cachedTree ??= CommandLine.tree(command))
let cachedValued: ReadonlySet<string> | undefined
/** The options of the tree that take a free value, for the zsh completion script. */
const valued = () => (cachedValued ??= CommandLine.valuedNames(tree()))

/** The exit code of the process: the one `main` answered, or Ctrl-C's. */
export const teardown = (exit: Exit.Exit<unknown, unknown>, onExit: (code: number) => void) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : ExitCode.ok)
  if (Cause.isInterruptedOnly(exit.cause)) return onExit(EventsCommand.stopping.isSuccess ? ExitCode.ok : ExitCode.interrupted)
  onExit(ExitCode.server)
}
