#!/usr/bin/env node
/**
 * The `hosting` executable. `hosting --version`, the help of a command and
 * the completion scripts answer before the commands (and the client and
 * Effect under them) are loaded: a start of the whole CLI takes most of a
 * second. The help and scripts come from the pages the build rendered from
 * the commands (Startup.ts).
 */
import { endQuietlyOnClosedPipes } from "./Pipes.js"
import * as Startup from "./Startup.js"
import { version } from "./Version.js"

endQuietlyOnClosedPipes()

const args = process.argv.slice(2)
const page = args.length === 1 && args[0] === "--version" ? `${version}\n` : Startup.answer(args)

if (page !== undefined) {
  process.stdout.write(page)
} else {
  const [NodeRuntime, Cli] = await Promise.all([import("@effect/platform-node/NodeRuntime"), import("./Cli.js")])
  NodeRuntime.runMain(Cli.main(process.argv), { disableErrorReporting: true, teardown: Cli.teardown })
}
