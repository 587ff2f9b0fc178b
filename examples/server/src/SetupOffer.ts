/**
 * The setup offer of a start without users: the one-time code printed and
 * written where the configuration says, so that the first user can be made.
 */
import { Setup } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { chmod, mkdir, rm, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import type { ServerConfig } from "./ServerConfig.js"

/** Where a start without users writes its setup code (ServerConfig.setupCodeFile); undefined: nowhere. */
export const setupCodeFileOf = (config: ServerConfig): string | undefined => {
  if (config.setupCodeFile !== undefined) return config.setupCodeFile
  const database = config.database
  return database._tag === "Sqlite" && database.filename !== ":memory:" ? join(dirname(database.filename), "setup-code") : undefined
}

/**
 * At a start without users: makes this process's setup code, prints it, and
 * writes it to the setup-code file (readable by this user only). At a start
 * with users, a code file left from the first start is removed.
 */
export const offerSetup = (config: ServerConfig) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const file = setupCodeFileOf(config)
    const code = yield* Effect.orDie((yield* Setup.Setup).begin())
    if (Option.isNone(code)) {
      if (file !== undefined) yield* Effect.promise(() => rm(file, { force: true }))
      return
    }
    const written = file === undefined ? Effect.succeed(false) : Effect.tryPromise(async () => {
      await mkdir(dirname(file), { recursive: true })
      await writeFile(file, `${code.value}\n`, { mode: 0o600 })
      // A file that was there keeps its mode through writeFile.
      await chmod(file, 0o600)
      return true
    }).pipe(Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`could not write the setup code to ${file}: ${String(error.error)}`), false)
    ))
    const where = (yield* written)
      ? `it is also in ${file} (readable by this user only)`
      : file === undefined
      ? "it is only printed here (set HOSTING_SETUP_CODE_FILE to have it written to a file)"
      : "it is only printed here"
    yield* Effect.sync(() =>
      console.log(
        [
          "setup: this instance has no user yet. Make the first one (an instance administrator) with this one-time code:",
          `setup:   ${code.value}`,
          "setup:   hosting setup --code <code> --user <your-id>   (or POST /api/v1/setup {code, user_id, name})",
          `setup: ${where}; any start while there is no user prints a new one.`
        ].join("\n")
      )
    )
  }))
