#!/usr/bin/env node
/**
 * Starts the example server with the configuration of the environment.
 * SIGINT and SIGTERM interrupt it: open requests end, the database closes.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"

const main = Effect.flatMap(ServerConfig.config, (config) => Layer.launch(Server.layer(config)))

NodeRuntime.runMain(main)
