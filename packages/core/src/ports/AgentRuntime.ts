/**
 * The agent runtime port: forwards a turn of a conversation to the deployed
 * agent and streams its reply back in chunks.
 */
import { Context, type Effect, Schema, type Stream } from "effect"
import type { Message } from "../model/Conversation.js"
import type { DeploymentRecord } from "../model/Deployment.js"

/** The agent could not answer (down, timed out, broke off). `message` is safe to show. */
export class AgentError extends Schema.TaggedError<AgentError>()("AgentError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** One turn for the agent: the deployment, the conversation so far and the new user message. */
export interface Turn {
  readonly deployment: DeploymentRecord
  readonly history: ReadonlyArray<Message>
  readonly message: Message
}

export class AgentRuntime extends Context.Tag("@hosting/core/AgentRuntime")<AgentRuntime, {
  /** The reply to a turn, chunk by chunk; interrupting the stream stops the agent's work. */
  readonly reply: (turn: Turn) => Stream.Stream<string, AgentError>
  /**
   * Optional: the same reply, each chunk handed to `emit` in order, ending
   * when the reply does; interrupting it stops the agent's work. `emit`
   * returns at once and never throws, so a runtime may call it from plain
   * code (a socket's data callback) with no fiber turn per chunk. Chat uses
   * it when present: it spares each chunk the machinery of a `Stream`.
   */
  readonly replyEach?: (turn: Turn, emit: (chunk: string) => void) => Effect.Effect<void, AgentError>
}>() {}
