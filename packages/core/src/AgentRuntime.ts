/**
 * The agent runtime port: forwards a turn of a conversation to the deployed
 * agent and streams its reply back in chunks.
 */
import { Context, Schema, type Stream } from "effect"
import type { Message } from "./Conversation.js"
import type { DeploymentRecord } from "./Deployment.js"

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
}>() {}
