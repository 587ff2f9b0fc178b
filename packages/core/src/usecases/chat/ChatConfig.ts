/**
 * The settings of chat, and the words a reply ends with when it does not
 * complete.
 */
import { Context, Duration } from "effect"

/** Settings of chat. */
export class ChatConfig extends Context.Reference<ChatConfig>()("@hosting/core/ChatConfig", {
  defaultValue: () => ({
    /** User messages a conversation takes before it is terminal. */
    messageLimit: 200,
    /** Files one message may carry. */
    maxAttachments: 16,
    /** How often a streaming reply is written to storage: a crash loses at most this much of it. */
    flushInterval: Duration.millis(100) as Duration.Duration,
    /** Heartbeat interval of reply streams. */
    heartbeat: Duration.seconds(25) as Duration.Duration,
    /**
     * How long a process's claim on the replies it is receiving lasts; it is
     * renewed every third of it. A process that stops renewing (it is stuck)
     * loses its replies to the others once the lease ends; one that died
     * loses them within a second, where the storage tells a dead process
     * (`Ports.LeaseOwner`, Postgres).
     */
    leaseDuration: Duration.seconds(30) as Duration.Duration,
    /**
     * `true` when several processes share the storage (Postgres): at start
     * only replies whose lease ended (or whose process died) are closed,
     * and every process sweeps for them. `false` (one process owns the storage): every reply left
     * streaming at start is closed at once.
     */
    sharedStorage: false
  })
}) {}

/** Why a reply ended without completing, as the stream and the history tell it. */
export const failure = {
  cancelled: "cancelled",
  shutdown: "The server stopped before the reply was complete."
} as const
