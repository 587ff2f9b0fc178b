/**
 * Checkpoints of a database file's write-ahead log on a thread of its own.
 *
 * A checkpoint copies the pages the log holds into the database file and
 * syncs both files. Made by the serving connection, at a commit that finds
 * the log past `wal_autocheckpoint` pages, it holds the event loop for as
 * long as the copy and the syncs take: on this machine class up to 130 ms
 * every few seconds under a steady stream of sends, and every request
 * waits behind it (docs/performance.md, "Checkpoints on a thread of their
 * own"). Here, once the log has passed `startAtBytes`, a worker thread
 * with a connection of its own makes a passive checkpoint every
 * `intervalMs` (a second by default): it copies what was committed while
 * the serving connection goes on writing (SQLite lets one checkpointer run
 * beside the writer). A writer starts the log over only when it finds it
 * wholly copied, which under steady writes it never does (commits arrive
 * during every checkpoint), so the serving connection's own checkpoint
 * stays: at its threshold it copies what the thread has not (at most an
 * interval of commits) and starts the log over. For a thread that fails,
 * it copies everything, as before.
 *
 * The thread's connection syncs as the serving one does (`synchronous =
 * NORMAL`): a checkpoint syncs the log before copying it, and the database
 * file after, so a crash loses nothing committed either way.
 */
import { stat } from "node:fs"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { Effect, Runtime, type Scope } from "effect"

export interface CheckpointerOptions {
  /**
   * How often the thread checkpoints (default 1 s). A page written many
   * times in between is copied once: in one flow run at 10 clients,
   * checkpoints every 200 ms took about 10 % more CPU a message than the
   * serving connection's every 10,000 pages, and once a second as much.
   * A checkpoint with nothing new to copy costs a few microseconds. Until
   * the thread starts, the log's size is looked at as often.
   */
  readonly intervalMs?: number | undefined
  /** How long the log grows before the thread starts (default 4 MB). */
  readonly startAtBytes?: number | undefined
}

// The thread's program: plain CommonJS, given the driver's path (it resolves nothing itself).
const program = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { timeout: 5000 })
db.pragma("synchronous = NORMAL")
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)")
  } catch (error) {
    parentPort.postMessage({ failed: String(error && error.message || error) })
  }
}
const timer = setInterval(checkpoint, workerData.intervalMs)
parentPort.on("message", (message) => {
  if (message !== "stop") return
  clearInterval(timer)
  checkpoint()
  db.close()
  parentPort.close()
})
`

/** The path of the better-sqlite3 this package loads, for the thread to load the same. */
const driver = () => createRequire(import.meta.url).resolve("better-sqlite3")

/** How long a stopping thread is given to finish its checkpoint and close before it is terminated. */
const stopWithinMs = 5_000

/** A thread started, and how to know it ended. */
interface Thread {
  readonly worker: Worker
  readonly exited: Promise<void>
}

/**
 * Starts the thread for the database at `filename` (in WAL mode already)
 * once its log is `startAtBytes` long (4 MB by default: SQLite's own
 * checkpoint threshold), which the file's size tells, looked at every
 * `intervalMs`: a server that writes little never pays for a thread (about
 * 20 MB of memory: an isolate of its own and the driver). Stopped when the
 * scope closes: its last checkpoint made and its connection closed. A
 * thread that cannot start, or fails later, leaves the checkpoints to the
 * serving connection, with a warning in the log.
 */
export const start = (filename: string, options: CheckpointerOptions = {}): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) => {
    const warn = (message: string) =>
      Runtime.runFork(runtime)(
        Effect.logWarning(`SQLite: checkpoints of ${filename} are left to the serving connection: ${message}`)
      )
    const intervalMs = options.intervalMs ?? 1000
    const startAtBytes = options.startAtBytes ?? 4 * 1024 * 1024
    const spawn = (): Thread | undefined => {
      try {
        const worker = new Worker(program, { eval: true, workerData: { driver: driver(), filename, intervalMs } })
        const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
        worker.on("message", (message: { readonly failed?: string }) => {
          if (message.failed !== undefined) warn(message.failed)
        })
        worker.on("error", (error) => warn(error.message))
        // The thread never keeps the process alive: a server that ends its scope stops it first anyway.
        worker.unref()
        return { worker, exited }
      } catch (error) {
        warn(String(error))
        return undefined
      }
    }
    return Effect.acquireRelease(
      Effect.sync(() => {
        // `watch` is cleared once the thread is started (or failed to start) and when the scope closes.
        const state: { thread: Thread | undefined; watch: ReturnType<typeof setInterval> | undefined } = {
          thread: undefined,
          watch: undefined
        }
        const look = () =>
          stat(`${filename}-wal`, (error, file) => {
            if (error !== null || file.size < startAtBytes || state.watch === undefined) return
            clearInterval(state.watch)
            state.watch = undefined
            state.thread = spawn()
          })
        state.watch = setInterval(look, intervalMs)
        state.watch.unref()
        return state
      }),
      (state) => {
        if (state.watch !== undefined) clearInterval(state.watch)
        state.watch = undefined
        const thread = state.thread
        return thread === undefined ? Effect.void : Effect.promise(async () => {
          thread.worker.postMessage("stop")
          const timer = setTimeout(() => void thread.worker.terminate(), stopWithinMs)
          await thread.exited
          clearTimeout(timer)
        })
      }
    )
  }).pipe(Effect.asVoid)
