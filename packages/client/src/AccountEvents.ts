/**
 * The account event stream (`GET /accounts/{account}/events`, see
 * docs/events.md) as typed events, reconnecting and resuming by itself.
 *
 * Every connection starts with `Ready`; its `resync` is true when the server
 * could not replay everything since the last id (or did not know it), and
 * the caller should then refetch what it shows. `AgentBuild` and
 * `DeploymentChanged` carry the event's `id`, which the stream sends back as
 * `Last-Event-ID` when it reconnects.
 */
import type { HttpClient } from "@effect/platform"
import { Data, Effect, Schema, Stream } from "effect"
import { type ApiError, type ConnectionLost, ProtocolError, type UnexpectedResponse } from "./ClientError.js"
import { type ClientOptions, normalizeBaseUrl } from "./HostingClient.js"
import * as ServerSentEvents from "./ServerSentEvents.js"

/** An event of the account stream. `Other` carries kinds this client does not know yet. */
export type AccountEvent = Data.TaggedEnum<{
  Ready: { readonly resync: boolean }
  AgentBuild: {
    readonly id: string
    readonly agent: string
    readonly build_id: string | undefined
    readonly status: string | undefined
    readonly version: string | undefined
  }
  DeploymentChanged: {
    readonly id: string
    readonly deployment_id: string
    readonly agent: string | undefined
    readonly build_id: string | undefined
    readonly namespace: string | undefined
    readonly status: string | undefined
  }
  Heartbeat: {}
  Other: { readonly event: string; readonly id: string | undefined; readonly data: unknown }
}>

/** Constructors and matchers of `AccountEvent`. */
export const AccountEvent = Data.taggedEnum<AccountEvent>()

const ReadyData = Schema.Struct({ resync: Schema.Boolean })
const AgentBuildData = Schema.Struct({
  agent: Schema.String,
  build_id: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String)
})
const DeploymentChangedData = Schema.Struct({
  deployment_id: Schema.String,
  agent: Schema.optional(Schema.String),
  build_id: Schema.optional(Schema.String),
  namespace: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String)
})

const json = <A, I>(schema: Schema.Schema<A, I>, message: ServerSentEvents.SseMessage) =>
  Schema.decodeUnknown(Schema.parseJson(schema))(message.data).pipe(
    Effect.mapError((cause) => new ProtocolError({ details: `the data of a ${message.event} event could not be read`, cause }))
  )

const withId = (message: ServerSentEvents.SseMessage) =>
  message.id === undefined
    ? Effect.fail(new ProtocolError({ details: `a ${message.event} event came without an id` }))
    : Effect.succeed(message.id)

/** The typed event of one message of the stream. */
export const decode = (message: ServerSentEvents.SseMessage): Effect.Effect<AccountEvent, ProtocolError> => {
  switch (message.event) {
    case "ready":
      return Effect.map(json(ReadyData, message), (data) => AccountEvent.Ready({ resync: data.resync }))
    case "heartbeat":
      return Effect.succeed(AccountEvent.Heartbeat())
    case "agent.build":
      return Effect.zipWith(withId(message), json(AgentBuildData, message), (id, data) =>
        AccountEvent.AgentBuild({
          id,
          agent: data.agent,
          build_id: data.build_id,
          status: data.status,
          version: data.version
        }))
    case "deployment.changed":
      return Effect.zipWith(withId(message), json(DeploymentChangedData, message), (id, data) =>
        AccountEvent.DeploymentChanged({
          id,
          deployment_id: data.deployment_id,
          agent: data.agent,
          build_id: data.build_id,
          namespace: data.namespace,
          status: data.status
        }))
    default:
      return Effect.succeed(AccountEvent.Other({ event: message.event, id: message.id, data: safeJson(message.data) }))
  }
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Which account to follow, and where to resume. */
export interface FollowOptions extends ClientOptions, ServerSentEvents.ReconnectOptions {
  readonly account: string
  /** Resume after this event id (else the stream starts live). */
  readonly lastEventId?: string | undefined
}

/** The URL of an account's event stream. */
export const url = (options: Pick<FollowOptions, "baseUrl" | "account">) =>
  `${normalizeBaseUrl(options.baseUrl)}/accounts/${encodeURIComponent(options.account)}/events`

/**
 * The events of an account, live, across reconnections, until the consumer
 * stops. Fails with the typed error of a 401, 403 or other 4xx answer, with
 * `ConnectionLost` when reconnecting kept failing, with `ProtocolError` on
 * data it cannot read.
 */
export const follow = (
  options: FollowOptions
): Stream.Stream<AccountEvent, ApiError | UnexpectedResponse | ConnectionLost | ProtocolError, HttpClient.HttpClient> =>
  Stream.suspend(() =>
    ServerSentEvents.stream({ ...options, url: url(options) }).pipe(
      Stream.mapEffect(decode)
    )
  )
