/**
 * Renders the pages `hosting` answers from without loading its commands
 * (Startup.ts): the help of every command of the tree and the completion
 * script of every shell, exactly as the full CLI prints them, uncoloured.
 * The build writes them to dist/help.json (scripts/write-help.mjs).
 */
import { Console, Effect } from "effect"
import * as Cli from "./Cli.js"
import * as CommandLine from "./CommandLine.js"
import type { Pages } from "./Startup.js"

/** The shells @effect/cli writes a completion script for. */
const shells = ["bash", "fish", "sh", "zsh"] as const

/** Every command's path after `hosting`, the root's empty. */
const pathsOf = (node: CommandLine.Node): Array<ReadonlyArray<string>> => [
  node.path.slice(1),
  ...[...node.children.values()].flatMap(pathsOf)
]

/** What `hosting <args>` prints on stdout; fails when it exits with anything but 0. */
const printed = (args: ReadonlyArray<string>): Effect.Effect<string, Error> => {
  let out = ""
  return Console.consoleWith((console) =>
    Cli.main(["node", "hosting", ...args]).pipe(
      Console.withConsole({ ...console, log: (...texts) => Effect.sync(() => void (out += `${texts.join(" ")}\n`)) })
    )
  ).pipe(
    Effect.flatMap((code) => code === 0 ? Effect.succeed(out) : Effect.fail(new Error(`hosting ${args.join(" ")} exited with ${code}`)))
  )
}

/** The pages of the whole command tree, rendered without colours whatever the terminal. */
export const render: Effect.Effect<Pages, Error> = Effect.gen(function*() {
  const help: Record<string, string> = {}
  for (const path of pathsOf(CommandLine.tree(Cli.command))) help[path.join(" ")] = yield* printed([...path, "--help"])
  const completions: Record<string, string> = {}
  for (const shell of shells) completions[shell] = yield* printed(["--completions", shell])
  return { help, completions }
})
