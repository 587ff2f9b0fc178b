#!/usr/bin/env node
/**
 * The `hosting` executable.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cli from "./Cli.js"
import * as Output from "./Output.js"

Output.endQuietlyOnClosedPipes()

NodeRuntime.runMain(Cli.main(process.argv), { disableErrorReporting: true, teardown: Cli.teardown })
