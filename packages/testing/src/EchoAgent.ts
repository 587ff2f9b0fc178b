/**
 * The echo agent: the embedded default runtime and a test double. It streams
 * the user's text back word by word (each word a chunk), with a delay between chunks.
 */
import { AgentRuntime } from "@hosting/core"
import { Duration, Effect, Layer } from "effect"

/** Settings of the echo agent. */
export interface EchoOptions {
  /** Pause before each chunk (HOSTING_ECHO_DELAY_MS). */
  readonly delay?: Duration.DurationInput
  /** A reply containing this text fails after what came before it (for tests of failing agents). */
  readonly failOn?: string
}

/** Splits a text into word chunks that keep their trailing spaces. */
export const chunksOf = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? []

const textOf = (message: AgentRuntime.Turn["message"]) =>
  message.content !== ""
    ? message.content
    : `Received ${message.attachments.length} file(s): ${message.attachments.map((a) => a.filename).join(", ")}`

export const make = (options: EchoOptions = {}) => {
  const delay = Duration.decode(options.delay ?? 0)
  const paused = Duration.toMillis(delay) > 0
  /** One chunk, after the pause; the chunk holding `failOn` fails instead. */
  const next = (chunk: string): Effect.Effect<string, AgentRuntime.AgentError> =>
    options.failOn !== undefined && chunk.includes(options.failOn)
      ? Effect.fail(new AgentRuntime.AgentError({ message: "The agent stopped answering." }))
      : paused
      ? Effect.as(Effect.sleep(delay), chunk)
      : Effect.succeed(chunk)
  // With no pause and no failure to stage, no effect per word.
  const plain = !paused && options.failOn === undefined
  return AgentRuntime.AgentRuntime.of({
    reply: ({ message }, emit) =>
      plain
        ? Effect.sync(() => chunksOf(textOf(message)).forEach((chunk) => emit(chunk)))
        : Effect.forEach(chunksOf(textOf(message)), (chunk) => Effect.map(next(chunk), emit), { discard: true })
  })
}

/** The echo agent as the AgentRuntime. */
export const layer = (options: EchoOptions = {}) => Layer.succeed(AgentRuntime.AgentRuntime, make(options))
