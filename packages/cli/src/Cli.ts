/**
 * The `hosting` command line: every command, the run, the error report and
 * the exit code.
 */
import { Command, ValidationError } from "@effect/cli"
// Deep imports: the package index loads every Node module of the platform, which slows down each start.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ClientError } from "@hosting/client"
import { Cause, Effect, Exit, Layer } from "effect"
import * as AccountsCommand from "./AccountsCommand.js"
import * as AgentsCommand from "./AgentsCommand.js"
import * as AuthCommand from "./AuthCommand.js"
import * as ChatCommand from "./ChatCommand.js"
import * as DeploymentsCommand from "./DeploymentsCommand.js"
import * as EventsCommand from "./EventsCommand.js"
import * as ExitCode from "./ExitCode.js"
import * as FilesCommand from "./FilesCommand.js"
import * as Output from "./Output.js"
import * as SecretsCommand from "./SecretsCommand.js"
import * as Session from "./Session.js"
import * as TokensCommand from "./TokensCommand.js"
import * as TracesCommand from "./TracesCommand.js"

/** The version `hosting --version` prints (the package's). */
export const version = "0.1.0"

export const command = Session.root.pipe(
  Command.withDescription("The command line of the agent hosting service"),
  Command.withSubcommands([
    AuthCommand.login,
    AuthCommand.logout,
    TokensCommand.setup,
    AccountsCommand.me,
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

/** Prints a failure as `error: <details> (<code>)` on stderr and answers its exit code. */
export const report = (error: unknown): Effect.Effect<number> =>
  Effect.gen(function*() {
    // @effect/cli has printed its own message (and the usage) already.
    if (ValidationError.isValidationError(error)) return ExitCode.usage
    if (error instanceof ExitCode.CliFailure) {
      yield* Output.note(`error: ${error.details} (${error.error})`)
      return error.exitCode
    }
    const problem = yield* ClientError.describe(error)
    yield* Output.note(`error: ${problem.details} (${problem.error})`)
    if (problem.status === 401) yield* Output.note("hint: sign in with `hosting login`, or pass --token / set HOSTING_TOKEN")
    return ExitCode.ofProblem(problem)
  })

/** What the CLI runs on: Node's file system, terminal and HTTP client (which sends streamed uploads with their length). */
export const layer = Layer.mergeAll(NodeContext.layer, NodeHttpClient.layer)

/**
 * Runs the CLI on `argv` (as `process.argv`: node, script, arguments) and
 * answers the exit code; nothing fails. Global options may stand anywhere.
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<number> =>
  run([...argv.slice(0, 2), ...Session.hoistGlobals(argv.slice(2))]).pipe(
    Effect.as(ExitCode.ok),
    Effect.catchAll(report),
    Effect.catchAllDefect((defect) =>
      Output.note(`error: ${defect instanceof Error ? defect.message : String(defect)} (internal_error)`).pipe(Effect.as(ExitCode.server))
    ),
    Effect.provide(layer)
  )

/** The exit code of the process: the one `main` answered, or Ctrl-C's. */
export const teardown = (exit: Exit.Exit<unknown, unknown>, onExit: (code: number) => void) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : ExitCode.ok)
  if (Cause.isInterruptedOnly(exit.cause)) return onExit(EventsCommand.stopping.isSuccess ? ExitCode.ok : ExitCode.interrupted)
  onExit(ExitCode.server)
}
