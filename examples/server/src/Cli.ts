/**
 * Starts the example server with the configuration of the environment;
 * `migrate` as the first argument migrates its database and ends instead.
 * SIGINT and SIGTERM interrupt it: open requests end, the database closes.
 * A bad configuration prints one line naming the problem and exits with 1.
 * Loaded by `main.ts` (see there).
 */
import { NodeRuntime } from "@effect/platform-node"
import { NodeLogger } from "@hosting/http-node"
import { Effect, Layer } from "effect"
import * as OwnTraces from "./OwnTraces.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"
import { started } from "./StartHeap.js"

const refuse = (message: string) =>
  Effect.sync(() => {
    console.error(`hosting: cannot start: ${message}`)
    process.exitCode = 1
  })

/** `main.js` serves; `main.js migrate` migrates the database and ends. */
const command = process.argv[2]

const serve = ServerConfig.config.pipe(
  Effect.flatMap((config) => {
    // JSON lines unless a person reads a terminal (HOSTING_LOG_FORMAT), from HOSTING_LOG_LEVEL up.
    const logging = NodeLogger.make({ format: config.logFormat, level: config.logLevel })
    // Without an OTLP endpoint the tracer is off: spans would only cost time (about a sixth of a catalog read,
    // measured by bench/), and the server makes no span per request either.
    return Layer.launch(
      Server.layer(config, { writeAccessLine: logging.access, listening: started }).pipe(OwnTraces.provide(config))
    ).pipe(Effect.provide(logging.layer))
  }),
  Effect.catchTags({
    ConfigError: (error) => refuse(`configuration: ${String(error)}`),
    StartupError: (error) => refuse(error.message),
    ObjectStoreError: (error) => refuse(`HOSTING_OBJECT_STORE: ${error.message}`)
  })
)

const migrateOnly = ServerConfig.config.pipe(
  Effect.flatMap(Server.migrate),
  Effect.flatMap((line) => Effect.sync(() => console.log(line))),
  Effect.catchTags({
    ConfigError: (error) => refuse(`configuration: ${String(error)}`),
    StartupError: (error) => refuse(error.message)
  })
)

const main = command === undefined
  ? serve
  : command === "migrate"
  ? migrateOnly
  : Effect.sync(() => {
    console.error(`hosting: unknown command ${JSON.stringify(command)}; run without one to serve, or with "migrate"`)
    process.exitCode = 2
  })

NodeRuntime.runMain(main, { disableErrorReporting: false })
