/**
 * The server's log on Node: JSON lines (one object per entry, for log
 * collectors) or the pretty form for people at a terminal, from a minimum
 * level up.
 *
 * JSON lines are written in batches: a line waits at most `batchMs` (20 ms
 * by default), or until a thousand lines wait, and every line waiting then
 * goes out in one write to stdout. A busy server logs an access line per
 * request; a write for each, or for each turn of the event loop, would cost
 * a system call per request or two (docs/performance.md, "Access lines in
 * batches of time"). Entries at Error and above are written at once, with
 * the lines before them, so that what comes before a crash is not lost;
 * whatever waits is written when the process exits.
 */
import { Effect, FiberRef, HashSet, Layer, Logger, LogLevel } from "effect"

export type Format = "json" | "pretty"

export interface NodeLoggerOptions {
  /** `json` (default when stdout is not a terminal) or `pretty`. */
  readonly format?: Format | undefined
  /** The least severe level written (default Info). */
  readonly level?: LogLevel.Literal | undefined
  /** Where lines go (default process.stdout); for tests. */
  readonly write?: ((text: string) => void) | undefined
  /** How long a JSON line may wait to be written with the lines after it, in ms (default 20; 0 writes at the next timer, about a millisecond later). */
  readonly batchMs?: number | undefined
}

/** The format to use when none is asked for: JSON unless a person reads stdout at a terminal. */
export const defaultFormat = (): Format => (process.stdout.isTTY ? "pretty" : "json")

/** How many lines may wait at most: a burst is written at once rather than held in memory. */
const maxPending = 1_000

/**
 * Lines waiting to be written in one piece: `batchMs` after the first of
 * them, at once when `maxPending` wait, and when the process exits.
 */
const batcher = (write: (text: string) => void, batchMs: number) => {
  let pending: Array<string> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    if (pending.length === 0) return
    const text = pending.join("")
    pending = []
    write(text)
  }
  process.once("exit", flush)
  const push = (line: string) => {
    pending.push(line)
    if (pending.length >= maxPending) return flush()
    // Unreferenced: waiting lines never keep the process alive, and its exit writes them.
    if (timer === undefined) timer = setTimeout(flush, batchMs).unref()
  }
  return { push, flush }
}

/** A JSON-lines logger writing through the batcher; errors and fatal entries go out at once. */
const batchedJson = (sink: ReturnType<typeof batcher>) => {
  const json = Logger.map(Logger.jsonLogger, (line) => sink.push(`${line}\n`))
  return Logger.make<unknown, void>((entry) => {
    json.log(entry)
    if (LogLevel.greaterThanEqual(entry.logLevel, LogLevel.Error)) sink.flush()
  })
}

/** The server's logging: the layer that installs it, and a direct writer of access lines when they are JSON. */
export interface NodeLogging {
  readonly layer: Layer.Layer<never>
  /**
   * Writes one access line (`message: "request"` at Info, as the JSON logger
   * would) straight into the batch, for a fraction of a logger call's cost;
   * undefined when lines are pretty or Info is below the level (then the
   * caller logs through Effect, which filters them).
   */
  readonly access: ((annotations: Readonly<Record<string, unknown>>) => void) | undefined
}

/**
 * Replaces the default logger, and the pretty one `NodeRuntime.runMain`
 * puts in its place, with the chosen format, from the chosen level. Other
 * loggers (an exporter's) stay.
 */
export const make = (options: NodeLoggerOptions = {}): NodeLogging => {
  const sink = batcher(options.write ?? ((text: string) => void process.stdout.write(text)), options.batchMs ?? 20)
  const format = options.format ?? defaultFormat()
  const level = LogLevel.fromLiteral(options.level ?? "Info")
  const logger = format === "json" ? batchedJson(sink) : Logger.prettyLogger()
  const layer = Layer.merge(
    Layer.scopedDiscard(Effect.locallyScopedWith(FiberRef.currentLoggers, (loggers) =>
      loggers.pipe(HashSet.remove(Logger.defaultLogger), HashSet.remove(Logger.prettyLoggerDefault), HashSet.add(logger)))),
    Logger.minimumLogLevel(level)
  )
  // The line as `JSON.stringify` of `{ message, logLevel, timestamp, annotations }` writes it, its fixed part written
  // once and the time formatted once a millisecond: an access line is written for every request.
  let formattedAt = -1
  let formatted = ""
  const timestamp = () => {
    const now = Date.now()
    if (now !== formattedAt) {
      formattedAt = now
      formatted = new Date(now).toISOString()
    }
    return formatted
  }
  const access = format === "json" && LogLevel.lessThanEqual(level, LogLevel.Info)
    ? (annotations: Readonly<Record<string, unknown>>) =>
      sink.push(`{"message":"request","logLevel":"INFO","timestamp":"${timestamp()}","annotations":${JSON.stringify(annotations)}}\n`)
    : undefined
  return { layer, access }
}

/** The layer of `make`, for a server that logs access lines through Effect (or not at all). */
export const layer = (options: NodeLoggerOptions = {}) => make(options).layer
