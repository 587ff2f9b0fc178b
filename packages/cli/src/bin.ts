#!/usr/bin/env node
/**
 * The `hosting` executable. `hosting --version` answers before the commands
 * (and the client and Effect under them) are loaded: a start of the whole
 * CLI takes most of a second.
 */
import { endQuietlyOnClosedPipes } from "./Pipes.js"
import { version } from "./Version.js"

endQuietlyOnClosedPipes()

if (process.argv.length === 3 && process.argv[2] === "--version") {
  process.stdout.write(`${version}\n`)
} else {
  const [NodeRuntime, Cli] = await Promise.all([import("@effect/platform-node/NodeRuntime"), import("./Cli.js")])
  NodeRuntime.runMain(Cli.main(process.argv), { disableErrorReporting: true, teardown: Cli.teardown })
}
