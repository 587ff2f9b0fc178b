/**
 * `hosting events follow`: an account's event stream, live, reconnecting
 * and resuming by itself, until Ctrl-C.
 */
import { Command, Options } from "@effect/cli"
import { AccountEvents } from "@hosting/client"
import { DateTime, Duration, Effect, Option, Stream } from "effect"
import * as Arguments from "./Arguments.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** An event's id at the end of its line, for `--last-event-id`. */
const idOf = (id: string | undefined) => (id === undefined ? "" : ` (id ${id})`)

/** Set while following: Ctrl-C is then the normal end of the command, not a failure. */
export const stopping = { isSuccess: false }

const human = (event: AccountEvents.AccountEvent): Effect.Effect<void> =>
  Effect.flatMap(DateTime.now, (time) => {
    const now = Output.date(time)
    switch (event._tag) {
      case "Ready":
        return Output.note(event.resync ? "connected (resync: events may have been missed; refetch what you show)" : "connected")
      case "Heartbeat":
        return Effect.void
      case "AgentBuild":
        return Output.line(
          [now, "agent.build", event.agent, event.build_id ?? "-", event.status ?? "-", event.version ?? ""].join(" ").trimEnd() +
            idOf(event.id)
        )
      case "DeploymentChanged":
        return Output.line(
          [now, "deployment.changed", event.deployment_id, event.agent ?? "-", event.build_id ?? "-", event.status ?? "-"].join(" ") +
            idOf(event.id)
        )
      case "Other":
        return Output.line(`${now} ${event.event} ${Output.toJson(event.data)}${idOf(event.id)}`)
    }
  })

/** One JSON line per event, as sent: `{ event, id?, data }`. */
const machine = (event: AccountEvents.AccountEvent): Effect.Effect<void> => {
  switch (event._tag) {
    case "Heartbeat":
      return Effect.void
    case "Ready":
      return Output.json({ event: "ready", data: { resync: event.resync } }, true)
    case "AgentBuild": {
      const { _tag, id, ...data } = event
      return Output.json({ event: "agent.build", id, data }, true)
    }
    case "DeploymentChanged": {
      const { _tag, id, ...data } = event
      return Output.json({ event: "deployment.changed", id, data }, true)
    }
    case "Other":
      return Output.json({ event: event.event, id: event.id, data: event.data }, true)
  }
}

const follow = Command.make("follow", {
  account: Arguments.account(),
  lastEventId: Options.text("last-event-id").pipe(
    Options.withDescription("Resume after this event id (default: start live)"),
    Options.optional
  )
}, ({ account, lastEventId }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    stopping.isSuccess = true
    yield* AccountEvents.follow({
      ...session.options,
      account,
      lastEventId: Option.getOrUndefined(lastEventId),
      // Outages of a few minutes are ridden out; the attempts count only failures in a row.
      maxAttempts: 20,
      onReconnect: (info) =>
        Output.note(
          `connection lost${info.cause === undefined ? "" : ` (${describeCause(info.cause)})`}; reconnecting in ${
            Duration.format(info.delay)
          }${info.lastEventId === undefined ? "" : ` after event ${info.lastEventId}`}`
        )
    }).pipe(Stream.runForEach(session.json ? machine : human))
  })).pipe(Command.withDescription("Follow an account's events live (agent builds, deployments) until Ctrl-C"))

const describeCause = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string" && cause.message !== ""
    ? cause.message
    : String(cause)

export const command = Command.make("events").pipe(
  Command.withDescription("The account event stream"),
  Command.withSubcommands([follow])
)
