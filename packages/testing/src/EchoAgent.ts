/**
 * The echo agent: the embedded default runtime and a test double. It streams
 * the user's text back word by word, with a delay between chunks.
 */
import { AgentRuntime } from "@hosting/core"
import { Duration, Effect, Layer, Stream } from "effect"

/** Settings of the echo agent. */
export interface EchoOptions {
  /** Pause before each chunk (HOSTING_ECHO_DELAY_MS). */
  readonly delay?: Duration.DurationInput
  /** A reply containing this text fails after what came before it (for tests of failing agents). */
  readonly failOn?: string
}

/** Splits a text into word chunks that keep their trailing spaces. */
export const chunksOf = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? []

export const make = (options: EchoOptions = {}) =>
  AgentRuntime.AgentRuntime.of({
    reply: ({ message }) => {
      const text = message.content !== ""
        ? message.content
        : `Received ${message.attachments.length} file(s): ${message.attachments.map((a) => a.filename).join(", ")}`
      const delay = Duration.decode(options.delay ?? 0)
      // With no pause and no failure to stage, the words go as one chunk: no effect per word.
      if (Duration.toMillis(delay) === 0 && options.failOn === undefined) return Stream.fromIterable(chunksOf(text))
      return Stream.fromIterable(chunksOf(text)).pipe(
        Stream.mapEffect((chunk) =>
          options.failOn !== undefined && chunk.includes(options.failOn)
            ? Effect.fail(new AgentRuntime.AgentError({ message: "The agent stopped answering." }))
            : Duration.toMillis(delay) > 0
            ? Effect.as(Effect.sleep(delay), chunk)
            : Effect.succeed(chunk)
        )
      )
    }
  })

/** The echo agent as the AgentRuntime. */
export const layer = (options: EchoOptions = {}) => Layer.succeed(AgentRuntime.AgentRuntime, make(options))
