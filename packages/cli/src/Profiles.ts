/**
 * Profiles: named sets of a base address and a token, kept in
 * `config.json` of the user's config directory — `$HOSTING_CONFIG_DIR`, else
 * `$XDG_CONFIG_HOME/hosting`, else `~/.config/hosting`. The file holds
 * tokens, so it is written with mode 0600 in a directory of mode 0700, and
 * replaced atomically (a crash never leaves half a file).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Config, Effect, Option, Schema } from "effect"
import { homedir } from "node:os"
import { CliFailure, usage } from "./ExitCode.js"

/** One profile. */
export const Profile = Schema.Struct({
  base_url: Schema.optional(Schema.String),
  token: Schema.optional(Schema.String)
})
export type Profile = typeof Profile.Type

/** The whole file; keys this version does not know are kept as they are. */
export const ConfigFile = Schema.Struct({
  profiles: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Profile }), { default: () => ({}) })
})
export type ConfigFile = typeof ConfigFile.Type

/** The profile used when none is named. */
export const defaultProfile = "default"

/** The directory of the config file. */
export const directory = Effect.gen(function*() {
  const path = yield* Path.Path
  const explicit = yield* Config.option(Config.nonEmptyString("HOSTING_CONFIG_DIR"))
  if (Option.isSome(explicit)) return path.resolve(explicit.value)
  const xdg = yield* Config.option(Config.nonEmptyString("XDG_CONFIG_HOME"))
  return path.join(Option.getOrElse(xdg, () => path.join(homedir(), ".config")), "hosting")
}).pipe(Effect.orDie)

/** The path of the config file. */
export const file = Effect.flatMap(Path.Path, (path) => Effect.map(directory, (dir) => path.join(dir, "config.json")))

const unreadable = (where: string, cause: unknown) =>
  new CliFailure({
    exitCode: usage,
    error: "config_unreadable",
    details: `The config file ${where} cannot be read (${cause instanceof Error ? cause.message : String(cause)}); fix or remove it.`
  })

const decode = Schema.decodeUnknown(Schema.parseJson(ConfigFile), { onExcessProperty: "preserve" })

/** The config file's content; an absent file is an empty one. */
export const load = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const where = yield* file
  if (!(yield* fs.exists(where).pipe(Effect.orElseSucceed(() => false)))) return { profiles: {} } as ConfigFile
  const text = yield* fs.readFileString(where).pipe(Effect.mapError((e) => unreadable(where, e)))
  return yield* decode(text).pipe(Effect.mapError((e) => unreadable(where, e)))
})

/** Writes the config file: a temporary file of mode 0600 beside it, renamed over it. */
export const save = (content: ConfigFile) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* directory
    const where = yield* file
    const failed = (e: unknown) =>
      new CliFailure({ exitCode: usage, error: "config_unwritable", details: `The config file ${where} cannot be written: ${String(e)}` })
    if (!(yield* fs.exists(dir).pipe(Effect.orElseSucceed(() => false)))) {
      yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 }).pipe(Effect.mapError(failed))
    }
    const temporary = `${where}.${process.pid}.tmp`
    const text = `${JSON.stringify(content, null, 2)}\n`
    yield* fs.writeFileString(temporary, text, { mode: 0o600 }).pipe(
      // A leftover temporary file of the same name would keep its old mode: set it.
      Effect.zipRight(fs.chmod(temporary, 0o600)),
      Effect.zipRight(fs.rename(temporary, where)),
      Effect.tapError(() => fs.remove(temporary).pipe(Effect.ignore)),
      Effect.mapError(failed)
    )
  })

/** Changes one profile (`undefined` removes it) and saves the file. */
export const update = (name: string, f: (profile: Profile | undefined) => Profile | undefined) =>
  Effect.gen(function*() {
    const content = yield* load
    const next = f(content.profiles[name])
    const profiles = { ...content.profiles }
    if (next === undefined) delete profiles[name]
    else profiles[name] = next
    yield* save({ ...content, profiles })
  })
