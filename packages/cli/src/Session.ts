/**
 * The global options of `hosting` and what they resolve to for one run: the
 * profile, the base address, the token and the output mode, plus the
 * derived client built on them.
 */
import { Command, Options } from "@effect/cli"
import { HostingClient } from "@hosting/client"
import { Config, Effect, Option } from "effect"
import { usageError } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Profiles from "./Profiles.js"

/** Where a profile without a base address points: the example server on its default port. */
export const defaultBaseUrl = "http://127.0.0.1:8080/api/v1"

/** The options every command takes; they may stand anywhere on the command line (see `hoistGlobals`). */
export const globals = {
  profile: Options.text("profile").pipe(
    Options.withDescription(`The profile to use (default "${Profiles.defaultProfile}", or $HOSTING_PROFILE)`),
    Options.optional
  ),
  baseUrl: Options.text("base-url").pipe(
    Options.withDescription(`The API's base address, e.g. ${defaultBaseUrl} (else $HOSTING_BASE_URL, else the profile's)`),
    Options.optional
  ),
  token: Options.text("token").pipe(
    Options.withDescription("A bearer token for this run (else $HOSTING_TOKEN, else the profile's)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print machine-readable JSON on stdout"))
}

/** The root command, without its subcommands: the handlers read the global options from it. */
export const root = Command.make("hosting", globals)

/** Options of the root that take a value, for `hoistGlobals`. */
const valued = new Set(["--profile", "--base-url", "--token"])

/**
 * Moves the global options to the front of the arguments, so that
 * `hosting agents list --json` means `hosting --json agents list`. Stops at
 * `--`, after which everything is a positional argument.
 */
export const hoistGlobals = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const hoisted: Array<string> = []
  const rest: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    const name = arg.split("=")[0]!
    if (arg === "--json") hoisted.push(arg)
    else if (valued.has(name) && arg.includes("=")) hoisted.push(arg)
    else if (valued.has(arg) && i + 1 < args.length) hoisted.push(arg, args[++i]!)
    else rest.push(arg)
  }
  return [...hoisted, ...rest]
}

/** What one run works with. */
export interface Session {
  readonly profile: string
  readonly baseUrl: string
  readonly token: string | undefined
  /** Where the token came from, for messages. */
  readonly tokenSource: "option" | "environment" | "profile" | "none"
  readonly json: boolean
  readonly client: HostingClient.Client
  readonly options: HostingClient.ClientOptions
}

const env = (name: string) => Config.option(Config.nonEmptyString(name)).pipe(Effect.orDie)

const normalized = (raw: string, where: string) =>
  Effect.try({
    try: () => HostingClient.normalizeBaseUrl(raw),
    catch: () => usageError(`${where} is not an http(s) URL: ${raw}`)
  })

/** The session this run resolved last, for the error report (`not signed in to <url>`). */
export const resolved: { current: Session | undefined } = { current: undefined }

/**
 * Resolves the session of this run. The profile's token is only sent to the
 * profile's own base address: pointing `--base-url` elsewhere never leaks it
 * (a note on stderr says it was withheld). A profile named with `--profile`
 * or `$HOSTING_PROFILE` must exist, except for the commands that create one
 * (`creating`: login, setup).
 */
const resolve = (creating: boolean) => Effect.gen(function*() {
  const options = yield* root
  const envProfile = yield* env("HOSTING_PROFILE")
  const named = Option.orElse(options.profile, () => envProfile)
  const profileName = Option.getOrElse(named, () => Profiles.defaultProfile)
  const file = yield* Profiles.load
  if (!creating && Option.isSome(named) && file.profiles[profileName] === undefined) {
    const known = Object.keys(file.profiles)
    return yield* usageError(
      `there is no profile "${profileName}"${known.length === 0 ? "" : ` (profiles: ${known.join(", ")})`}`,
      "profile_not_found",
      `create it by signing in: hosting login --profile ${profileName} --base-url <url>`
    )
  }
  const stored = file.profiles[profileName] ?? {}
  const envBase = yield* env("HOSTING_BASE_URL")
  const baseUrl = Option.isSome(options.baseUrl)
    ? yield* normalized(options.baseUrl.value, "--base-url")
    : Option.isSome(envBase)
    ? yield* normalized(envBase.value, "HOSTING_BASE_URL")
    : stored.base_url !== undefined
    ? yield* normalized(stored.base_url, `the base_url of profile "${profileName}"`)
    : defaultBaseUrl
  const storedBase = stored.base_url === undefined ? undefined : yield* Effect.option(normalized(stored.base_url, "base_url"))
  const tokenEnv = yield* env("HOSTING_TOKEN")
  const profileToken = storedBase !== undefined && Option.getOrUndefined(storedBase) === baseUrl ? stored.token : undefined
  const [token, tokenSource] = Option.isSome(options.token)
    ? [options.token.value, "option" as const]
    : Option.isSome(tokenEnv)
    ? [tokenEnv.value, "environment" as const]
    : profileToken !== undefined
    ? [profileToken, "profile" as const]
    : [undefined, "none" as const]
  if (!creating && stored.token !== undefined && profileToken === undefined && tokenSource === "none") {
    const where = storedBase === undefined ? "no base address" : Option.getOrElse(storedBase, () => "an unreadable base address")
    yield* Output.note(
      `note: the token of profile "${profileName}" is for ${where}, not ${baseUrl}; it is not sent there`
    )
  }
  const clientOptions: HostingClient.ClientOptions = token === undefined ? { baseUrl } : { baseUrl, token }
  const client = yield* HostingClient.make(clientOptions)
  const session: Session = {
    profile: profileName,
    baseUrl,
    token,
    tokenSource,
    json: options.json,
    client,
    options: clientOptions
  }
  resolved.current = session
  return session
})

/** The session of this run; a profile named must exist. */
export const current = resolve(false)

/** The session of a command that creates the profile it names (login, setup). */
export const creating = resolve(true)
