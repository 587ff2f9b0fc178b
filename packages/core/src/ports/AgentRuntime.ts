/**
 * The agent runtime port: forwards a turn of a conversation to the deployed
 * agent and hands its reply back chunk by chunk.
 */
import { Context, Effect, Schema, Stream } from "effect"
import { protocolOf } from "../model/AgentSpec.js"
import type { ConversationId, Message } from "../model/Conversation.js"
import type { DeploymentRecord } from "../model/Deployment.js"

/** The agent could not answer (down, timed out, broke off). `message` is safe to show. */
export class AgentError extends Schema.TaggedError<AgentError>()("AgentError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** One turn for the agent: the deployment, the conversation (its id, the messages so far) and the new user message. */
export interface Turn {
  readonly deployment: DeploymentRecord
  /** The conversation the turn belongs to: a runtime whose agent keeps its own context names it with this. */
  readonly conversation: ConversationId
  readonly history: ReadonlyArray<Message>
  readonly message: Message
  /**
   * The W3C `traceparent` of the turn's trace (absent while traces are off):
   * a runtime that calls the agent over HTTP sends it, so that the spans the
   * agent exports for the turn land in the turn's trace.
   */
  readonly traceparent?: string | undefined
}

/**
 * What every runtime promises (the contract suite, `AgentRuntimeSuite` in
 * @hosting/testing, checks it):
 * - `reply` hands `emit` the agent's answer chunk by chunk, in order, and
 *   succeeds when the answer ends;
 * - an agent that cannot answer or breaks off fails it with `AgentError`,
 *   after the chunks that came before;
 * - interrupting it stops the agent's work: no chunk is emitted after;
 * - replies running at once are independent, and each run asks anew.
 *
 * `emit` returns at once and never throws, so a runtime may call it from
 * plain code (a socket's data callback), with no fiber turn per chunk.
 */
export class AgentRuntime extends Context.Tag("@hosting/core/AgentRuntime")<AgentRuntime, {
  /** The reply to a turn, each chunk handed to `emit` as it arrives; ends when the reply does. */
  readonly reply: (turn: Turn, emit: (chunk: string) => void) => Effect.Effect<void, AgentError>
}>() {}

/**
 * The reply to a turn as a `Stream` of its chunks: a view of `reply` for
 * code that composes streams. Each run of the stream asks the agent anew;
 * interrupting it stops the agent's work.
 */
export const replyStream = (runtime: AgentRuntime["Type"], turn: Turn): Stream.Stream<string, AgentError> =>
  Stream.asyncScoped<string, AgentError>((emit) =>
    runtime.reply(turn, (chunk) => void emit.single(chunk)).pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.promise(() => emit.fail(error)),
        onSuccess: () => Effect.promise(() => emit.end())
      }),
      Effect.forkScoped
    ))

/**
 * A runtime that hands each turn to the runtime of the protocol its
 * deployment's spec names (`protocol`, see AgentSpec): `fallback` for a spec
 * that names none or the default one, the runtime of `runtimes` for the
 * others. A protocol no runtime speaks fails the reply with a sentence that
 * names it (the registration already warned of it).
 */
export const byProtocol = (
  fallback: AgentRuntime["Type"],
  runtimes: Readonly<Record<string, AgentRuntime["Type"]>>
): AgentRuntime["Type"] =>
  AgentRuntime.of({
    reply: (turn, emit) => {
      const protocol = protocolOf(turn.deployment.spec)
      if (protocol === undefined) return fallback.reply(turn, emit)
      const runtime = Object.hasOwn(runtimes, protocol) ? runtimes[protocol] : undefined
      if (runtime !== undefined) return runtime.reply(turn, emit)
      return Effect.fail(new AgentError({ message: `The agent's spec names the protocol "${String(protocol).slice(0, 40)}", which this server does not speak` }))
    }
  })
