/**
 * The server's configuration, read from the environment (extensions.md,
 * "Configuration"). Every variable has a default that runs the embedded
 * setup: SQLite file, fake cluster, file-system objects, echo agent.
 */
import { RateLimit } from "@hosting/http"
import { Config, ConfigError, ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"

/** Where the database is. */
export type Database =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: string }

/** Where objects (files) are kept. */
export type ObjectStore =
  | { readonly _tag: "Fs"; readonly directory: string }
  | { readonly _tag: "Memory" }
  | { readonly _tag: "S3"; readonly bucket: string }

export interface ServerConfig {
  readonly port: number
  readonly host: string
  readonly database: Database
  readonly objectStore: ObjectStore
  readonly cluster: "fake" | "kubernetes"
  readonly agentRuntime: "echo" | "http"
  readonly fixtures: string | undefined
  /**
   * Where a start without users writes its setup code: HOSTING_SETUP_CODE_FILE, else `setup-code` beside a
   * SQLite file; undefined: the code is only printed (Postgres, or SQLite in memory, without the variable).
   */
  readonly setupCodeFile: string | undefined
  /** How the log is written: JSON lines or pretty (HOSTING_LOG_FORMAT; default JSON unless stdout is a terminal). */
  readonly logFormat: "json" | "pretty" | undefined
  /** The least severe level logged (HOSTING_LOG_LEVEL). */
  readonly logLevel: "Debug" | "Info" | "Warning" | "Error"
  /** One access line per request (HOSTING_ACCESS_LOG, on by default). */
  readonly accessLog: boolean
  /** Metrics in the Prometheus text format (HOSTING_METRICS, on by default). */
  readonly metrics: boolean
  /** A port of their own for the metrics (HOSTING_METRICS_PORT); undefined: `/metrics` on the server's port. */
  readonly metricsPort: number | undefined
  /** Single sign-on: the OpenID provider and this server's client there (HOSTING_OIDC_*); undefined: off. */
  readonly oidc: { readonly issuer: string; readonly clientId: string; readonly clientSecret: Redacted.Redacted<string> | undefined } | undefined
  readonly messageLimit: number
  readonly maxAttachments: number
  readonly eventReplayCap: number
  readonly eventRetentionDays: number
  readonly heartbeatMs: number
  readonly echoDelayMs: number
  readonly traces: boolean
  /** Days a trace is kept before the sweep deletes it (0: kept for ever). */
  readonly traceRetentionDays: number
  /** How long a token's principal is kept in memory after it was read (0: not kept). */
  readonly authCacheMs: number
  /** How long a process's claim on the replies it receives lasts (renewed every third). */
  readonly replyLeaseMs: number
  /** How long a file reservation's upload URL stays valid. */
  readonly uploadExpiryMs: number
  /** How long after its upload expiry a reservation may still be completed; then the sweep removes it. */
  readonly uploadGraceMs: number
  /** Interval of the sweep of expired file reservations. */
  readonly fileSweepMs: number
  /** Interval of the reads of live deployments' rollouts in the cluster. */
  readonly rolloutPollMs: number
  /** Most connections to Postgres per process. */
  readonly databasePoolSize: number
  /** The API's public base URL, for links it hands out (device login); derived from each request when unset. */
  readonly publicUrl: string | undefined
  /** Seconds a device-login client waits between polls. */
  readonly deviceInterval: number
  readonly maxBodyBytes: number
  /** Milliseconds a client has to send a request's headers. */
  readonly headersTimeoutMs: number
  /** Milliseconds a client has to send a whole request, body included (0: no limit). */
  readonly requestTimeoutMs: number
  /** Milliseconds an idle kept-alive connection stays open. */
  readonly keepAliveTimeoutMs: number
  /** Milliseconds the server keeps serving after SIGTERM, with `/readyz` answering 503, before it stops. */
  readonly shutdownDelayMs: number
  /** Milliseconds requests and streams still open at the stop may take before their connections are cut. */
  readonly shutdownGraceMs: number
  /** Most event and reply streams one user holds open, all their tokens and sessions together (0: no limit). */
  readonly maxStreamsPerToken: number
  /** Requests per user, all their tokens and sessions together; undefined for no limit. */
  readonly rateLimit: RateLimit.Rate | undefined
  /** Requests per client address (anonymous, or a credential not seen yet); undefined for no limit. */
  readonly rateLimitIp: RateLimit.Rate | undefined
  /** Proxies in front whose X-Forwarded-For entries name the client (0: none). */
  readonly trustProxy: number
  /** The built dashboard served at `/`: a folder, `off`, or undefined for the `@hosting/dashboard` build when there is one. */
  readonly dashboard: string | undefined
  /**
   * The server's own spans, exported over OTLP as the standard `OTEL_*` variables say: on when an OTLP endpoint
   * is set, unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none; undefined: no tracer at all. The
   * service name is `hosting` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names one (then undefined).
   */
  readonly otlpTraces: { readonly defaultServiceName: string | undefined } | undefined
  readonly s3: {
    readonly endpoint: string | undefined
    readonly region: string
    readonly accessKeyId: string | undefined
    readonly secretAccessKey: Redacted.Redacted<string> | undefined
    readonly createBucket: boolean
  }
}

const parseWith = <I, A>(name: string, parse: (raw: I) => Either.Either<A, string>) => (raw: I) =>
  Either.mapLeft(parse(raw), (message) => ConfigError.InvalidData([name], message))

/** `sqlite:<path>`, `sqlite::memory:` or `postgres://...`. */
export const parseDatabase = (raw: string): Either.Either<Database, string> => {
  if (raw.startsWith("sqlite:")) {
    const filename = raw.slice("sqlite:".length)
    return filename === "" ? Either.left("sqlite: needs a path, or :memory:") : Either.right({ _tag: "Sqlite", filename })
  }
  if (raw.startsWith("postgres://") || raw.startsWith("postgresql://")) return Either.right({ _tag: "Postgres", url: raw })
  return Either.left(`expected sqlite:<path>, sqlite::memory: or postgres://..., got ${JSON.stringify(raw)}`)
}

/** `fs:<dir>`, `memory:` or `s3://<bucket>`. */
export const parseObjectStore = (raw: string): Either.Either<ObjectStore, string> => {
  if (raw === "memory:") return Either.right({ _tag: "Memory" })
  if (raw.startsWith("fs:") && raw.length > 3) return Either.right({ _tag: "Fs", directory: raw.slice(3) })
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/?$/.exec(raw)
  if (s3) return Either.right({ _tag: "S3", bucket: s3[1]! })
  return Either.left(`expected fs:<dir>, memory: or s3://<bucket>, got ${JSON.stringify(raw)}`)
}

// Out of range names its variable (Config.validate would report the value's path, which is empty).
const int = (name: string, fallback: number, min: number, max: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail(parseWith(name, (n: number) =>
      n >= min && n <= max ? Either.right(n) : Either.left(`must be a whole number from ${min} to ${max}, got ${n}`)))
  )

const choice = <const A extends string>(name: string, values: ReadonlyArray<A>, fallback: A) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail(parseWith(name, (raw) =>
      (values as ReadonlyArray<string>).includes(raw)
        ? Either.right(raw as A)
        : Either.left(`must be one of ${values.join(", ")}, got ${JSON.stringify(raw)}`)))
  )

/** `<requests>/<seconds>`, `off` or unset. */
const rate = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault("off"),
    Config.mapOrFail(parseWith(name, (raw) => {
      const parsed = RateLimit.parseRate(raw)
      return parsed === "invalid"
        ? Either.left(`expected <requests>/<seconds> (for example 600/60) or off, got ${JSON.stringify(raw)}`)
        : Either.right(parsed)
    }))
  )

/** `false` (default), `true` (one proxy) or the number of proxies in front. */
export const parseTrustProxy = (raw: string): Either.Either<number, string> => {
  const value = raw.trim().toLowerCase()
  if (value === "" || value === "false") return Either.right(0)
  if (value === "true") return Either.right(1)
  if (/^\d{1,2}$/.test(value)) return Either.right(Number(value))
  return Either.left(`expected false, true or a number of proxies, got ${JSON.stringify(raw)}`)
}

/** Node refuses a headers timeout above the request timeout. */
const timeoutsAgree = (c: ServerConfig) =>
  c.requestTimeoutMs === 0 || c.headersTimeoutMs <= c.requestTimeoutMs
    ? Either.right(c)
    : Either.left(ConfigError.InvalidData(
      ["HOSTING_HEADERS_TIMEOUT_MS"],
      `must not be above HOSTING_REQUEST_TIMEOUT_MS (${c.requestTimeoutMs}), got ${c.headersTimeoutMs}`
    ))

/** An optional variable: unset or empty is none. */
const optional = (name: string) => Config.string(name).pipe(Config.option, Config.map((o) => (o._tag === "Some" && o.value !== "" ? o.value : undefined)))

/**
 * HOSTING_OIDC_ISSUER (https, or http on a loopback host) with
 * HOSTING_OIDC_CLIENT_ID, and the client secret HOSTING_OIDC_CLIENT_SECRET
 * (or its file, HOSTING_OIDC_CLIENT_SECRET_FILE; none: a public client, PKCE
 * alone). Without an issuer, single sign-on is off; an issuer without a
 * client id is refused.
 */
const oidcConfig = Config.all({
  issuer: optional("HOSTING_OIDC_ISSUER"),
  clientId: optional("HOSTING_OIDC_CLIENT_ID"),
  clientSecret: optional("HOSTING_OIDC_CLIENT_SECRET")
}).pipe(Config.mapOrFail(({ clientId, clientSecret, issuer }) => {
  if (issuer === undefined) return Either.right(undefined)
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    return Either.left(ConfigError.InvalidData(["HOSTING_OIDC_ISSUER"], `expected an https URL, got ${JSON.stringify(issuer)}`))
  }
  const loopback = url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]"
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    return Either.left(ConfigError.InvalidData(["HOSTING_OIDC_ISSUER"], `must be https (http only on a loopback host), got ${issuer}`))
  }
  if (clientId === undefined) return Either.left(ConfigError.MissingData(["HOSTING_OIDC_CLIENT_ID"], "needed with HOSTING_OIDC_ISSUER"))
  return Either.right({ issuer, clientId, clientSecret: clientSecret === undefined ? undefined : Redacted.make(clientSecret) })
}))

/** OTLP export of the server's spans (ServerConfig.otlpTraces), from the variables every OpenTelemetry SDK reads. */
const otlpTraces = Config.all({
  endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT"),
  tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  disabled: optional("OTEL_SDK_DISABLED"),
  exporters: optional("OTEL_TRACES_EXPORTER"),
  serviceName: optional("OTEL_SERVICE_NAME"),
  attributes: optional("OTEL_RESOURCE_ATTRIBUTES")
}).pipe(Config.map((otel) => {
  const exporters = (otel.exporters ?? "otlp").split(",").map((name) => name.trim().toLowerCase())
  const on = (otel.endpoint ?? otel.tracesEndpoint) !== undefined && otel.disabled?.trim().toLowerCase() !== "true" &&
    !exporters.includes("none")
  const named = otel.serviceName !== undefined || (otel.attributes ?? "").split(",").some((pair) => pair.split("=")[0]!.trim() === "service.name")
  return on ? { defaultServiceName: named ? undefined : "hosting" } : undefined
}))

/** The variables, validated; a bad value names its variable. */
const settings: Config.Config<ServerConfig> = Config.all({
  port: int("HOSTING_PORT", 8080, 0, 65535),
  host: Config.string("HOSTING_HOST").pipe(Config.withDefault("127.0.0.1")),
  database: Config.string("HOSTING_DATABASE_URL").pipe(
    Config.withDefault("sqlite:./.hosting/hosting.db"),
    Config.mapOrFail(parseWith("HOSTING_DATABASE_URL", parseDatabase))
  ),
  objectStore: Config.string("HOSTING_OBJECT_STORE").pipe(
    Config.withDefault("fs:./.hosting/objects"),
    Config.mapOrFail(parseWith("HOSTING_OBJECT_STORE", parseObjectStore))
  ),
  cluster: choice("HOSTING_CLUSTER", ["fake", "kubernetes"], "fake"),
  agentRuntime: choice("HOSTING_AGENT_RUNTIME", ["echo", "http"], "echo"),
  fixtures: optional("HOSTING_FIXTURES"),
  setupCodeFile: optional("HOSTING_SETUP_CODE_FILE"),
  oidc: oidcConfig,
  logFormat: choice("HOSTING_LOG_FORMAT", ["json", "pretty", "auto"], "auto").pipe(
    Config.map((format) => (format === "auto" ? undefined : format))
  ),
  logLevel: choice("HOSTING_LOG_LEVEL", ["debug", "info", "warning", "error"], "info").pipe(
    Config.map((level) => (level.charAt(0).toUpperCase() + level.slice(1)) as "Debug" | "Info" | "Warning" | "Error")
  ),
  accessLog: choice("HOSTING_ACCESS_LOG", ["on", "off"], "on").pipe(Config.map((v) => v === "on")),
  metrics: choice("HOSTING_METRICS", ["on", "off"], "on").pipe(Config.map((v) => v === "on")),
  metricsPort: int("HOSTING_METRICS_PORT", 0, 0, 65535).pipe(Config.map((port) => (port === 0 ? undefined : port))),
  messageLimit: int("HOSTING_MESSAGE_LIMIT", 200, 1, 1_000_000),
  maxAttachments: int("HOSTING_MAX_ATTACHMENTS", 16, 0, 1000),
  eventReplayCap: int("HOSTING_EVENT_REPLAY_CAP", 1000, 1, 1_000_000),
  eventRetentionDays: int("HOSTING_EVENT_RETENTION_DAYS", 7, 1, 3650),
  heartbeatMs: int("HOSTING_HEARTBEAT_MS", 25_000, 10, 3_600_000),
  echoDelayMs: int("HOSTING_ECHO_DELAY_MS", 20, 0, 60_000),
  traces: choice("HOSTING_TRACES", ["on", "off"], "on").pipe(Config.map((v) => v === "on")),
  traceRetentionDays: int("HOSTING_TRACE_RETENTION_DAYS", 30, 0, 36_500),
  replyLeaseMs: int("HOSTING_REPLY_LEASE_MS", 30_000, 300, 3_600_000),
  authCacheMs: int("HOSTING_AUTH_CACHE_MS", 1000, 0, 60_000),
  // Seven days is the longest a presigned S3 URL may live.
  uploadExpiryMs: int("HOSTING_UPLOAD_EXPIRY_MS", 900_000, 1000, 604_800_000),
  uploadGraceMs: int("HOSTING_UPLOAD_GRACE_MS", 900_000, 0, 604_800_000),
  fileSweepMs: int("HOSTING_FILE_SWEEP_MS", 300_000, 100, 86_400_000),
  rolloutPollMs: int("HOSTING_ROLLOUT_POLL_MS", 5000, 100, 3_600_000),
  // The event and reply buses hold one pooled connection each for their notifications: a pool of two or
  // less would leave none for queries, and the start would wait for one forever.
  databasePoolSize: int("HOSTING_DATABASE_POOL_SIZE", 10, 3, 1000),
  publicUrl: Config.string("HOSTING_PUBLIC_URL").pipe(
    Config.option,
    Config.map(Option.getOrUndefined),
    Config.mapOrFail((url) =>
      url === undefined || /^https?:\/\/[^/]+\/api\/v1\/?$/.test(url)
        ? Either.right(url)
        : Either.left(ConfigError.InvalidData(["HOSTING_PUBLIC_URL"], `expected http(s)://host/api/v1, got ${JSON.stringify(url)}`))
    )
  ),
  deviceInterval: int("HOSTING_DEVICE_INTERVAL_S", 5, 1, 60),
  maxBodyBytes: int("HOSTING_MAX_BODY_BYTES", 2 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  headersTimeoutMs: int("HOSTING_HEADERS_TIMEOUT_MS", 30_000, 100, 3_600_000),
  requestTimeoutMs: int("HOSTING_REQUEST_TIMEOUT_MS", 300_000, 0, 86_400_000),
  keepAliveTimeoutMs: int("HOSTING_KEEP_ALIVE_TIMEOUT_MS", 5_000, 100, 3_600_000),
  shutdownDelayMs: int("HOSTING_SHUTDOWN_DELAY_MS", 0, 0, 600_000),
  shutdownGraceMs: int("HOSTING_SHUTDOWN_GRACE_MS", 3000, 0, 600_000),
  maxStreamsPerToken: int("HOSTING_MAX_STREAMS_PER_TOKEN", 100, 0, 1_000_000),
  rateLimit: rate("HOSTING_RATE_LIMIT"),
  rateLimitIp: rate("HOSTING_RATE_LIMIT_IP"),
  trustProxy: Config.string("HOSTING_TRUST_PROXY").pipe(
    Config.withDefault("false"),
    Config.mapOrFail(parseWith("HOSTING_TRUST_PROXY", parseTrustProxy))
  ),
  dashboard: optional("HOSTING_DASHBOARD"),
  otlpTraces,
  s3: Config.all({
    endpoint: Config.string("HOSTING_S3_ENDPOINT").pipe(Config.option, Config.map(Option.getOrUndefined)),
    region: Config.string("AWS_REGION").pipe(Config.withDefault("us-east-1")),
    accessKeyId: Config.string("AWS_ACCESS_KEY_ID").pipe(Config.option, Config.map(Option.getOrUndefined)),
    // Redacted after reading: Config.redacted would also hide why its file could not be read (no string fails to parse).
    secretAccessKey: Config.string("AWS_SECRET_ACCESS_KEY").pipe(Config.option, Config.map(Option.getOrUndefined), Config.map((key) => (key === undefined ? undefined : Redacted.make(key)))),
    createBucket: Config.boolean("HOSTING_S3_CREATE_BUCKET").pipe(Config.withDefault(false))
  })
}).pipe(Config.mapOrFail(timeoutsAgree))

// Config.string() is a primitive, though typed as any Config.
const anyText = Config.string() as Config.Config.Primitive<string>

/** One trailing line break, as editors and `echo` leave at the end of a file. */
const withoutFinalNewline = (text: string) => text.replace(/\r?\n$/, "")

/**
 * The provider with the `_FILE` rule: any variable NAME may instead be given
 * as NAME_FILE, the path of a file holding the value (a Kubernetes Secret
 * mounted as files, a Docker secret), read at start with one trailing line
 * break dropped. Both set, or a file that cannot be read, is a configuration
 * error naming the variables.
 */
export const withValueFiles = (provider: ConfigProvider.ConfigProvider): ConfigProvider.ConfigProvider => {
  const flat = provider.flattened
  return ConfigProvider.fromFlat(ConfigProvider.makeFlat({
    patch: flat.patch,
    enumerateChildren: (path) => flat.enumerateChildren(path),
    load: (path, primitive, split) => {
      const name = path.join("_")
      const fileVariable = `${name}_FILE`
      // Unset and empty are the same, as for the variables themselves.
      const given = (p: ReadonlyArray<string>) =>
        flat.load(p, anyText, false).pipe(
          Effect.map((values) => (values[0] === "" ? undefined : values[0])),
          Effect.catchIf(ConfigError.isMissingDataOnly, () => Effect.succeed(undefined))
        )
      return Effect.gen(function*() {
        const file = yield* given([...path.slice(0, -1), `${path[path.length - 1]}_FILE`])
        if (file === undefined) return yield* flat.load(path, primitive, split)
        if ((yield* given(path)) !== undefined) {
          return yield* Effect.fail(ConfigError.InvalidData([fileVariable], `set it or ${name}, not both`))
        }
        const text = yield* Effect.try({
          try: () => readFileSync(file, "utf8"),
          catch: (error) => ConfigError.InvalidData([fileVariable], `cannot read ${file}: ${(error as Error).message}`)
        })
        return [yield* Either.mapLeft(primitive.parse(withoutFinalNewline(text)), (error) => ConfigError.prefixed(error, [fileVariable]))]
      })
    }
  }))
}

/** The whole configuration from the current provider (the environment by default), with the `_FILE` rule. */
export const config: Effect.Effect<ServerConfig, ConfigError.ConfigError> = Effect.configProviderWith((provider) =>
  Effect.withConfigProvider(settings, withValueFiles(provider))
)
