/**
 * The server's JSON log on Node: lines wait a little and go out together, in
 * their order; an error goes out at once with what came before it; a burst
 * is not held in memory; what waits is written when the process exits.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import * as NodeLogger from "../src/NodeLogger.js"

/** A JSON logger for tests: its writes, and a way to log through it. */
const logging = (batchMs?: number) => {
  const writes: Array<string> = []
  const logs = NodeLogger.make({ format: "json", write: (text) => void writes.push(text), batchMs })
  const log = (effect: Effect.Effect<void>) => Effect.runSync(Effect.provide(effect, logs.layer))
  const messages = (text: string) => text.trimEnd().split("\n").map((line) => JSON.parse(line).message)
  return { writes, logs, log, messages }
}

/** Advances the fake clock by `ms`: nothing more is written before its last millisecond, one write at it. */
const writtenAfter = (writes: ReadonlyArray<string>, ms: number) => {
  const before = writes.length
  vi.advanceTimersByTime(ms - 1)
  expect(writes).toHaveLength(before)
  vi.advanceTimersByTime(1)
  expect(writes).toHaveLength(before + 1)
}

describe("NodeLogger: JSON lines in batches", () => {
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())

  it("writes the lines of a burst together, in their order, once the first has waited batchMs", () => {
    const { writes, log, logs, messages } = logging(20)
    log(Effect.logInfo("one"))
    logs.access!({ method: "GET", route: "/api/v1/me", status: 200 })
    log(Effect.logWarning("three"))
    writtenAfter(writes, 20)
    expect(messages(writes[0]!)).toEqual(["one", "request", "three"])
    // The next line waits its own batchMs.
    log(Effect.logInfo("four"))
    writtenAfter(writes, 20)
    expect(messages(writes[1]!)).toEqual(["four"])
  })

  it("writes an error at once, after the lines that waited before it", () => {
    const { writes, log, messages } = logging(20)
    log(Effect.logInfo("before"))
    log(Effect.logError("broken"))
    expect(writes).toHaveLength(1)
    expect(messages(writes[0]!)).toEqual(["before", "broken"])
    log(Effect.logInfo("after"))
    vi.advanceTimersByTime(20)
    expect(messages(writes[1]!)).toEqual(["after"])
  })

  it("writes a thousand waiting lines at once rather than holding more", () => {
    const { writes, logs } = logging(60_000)
    for (let i = 0; i < 999; i++) logs.access!({ status: 200, n: i })
    expect(writes).toEqual([])
    logs.access!({ status: 200, n: 999 })
    expect(writes).toHaveLength(1)
    expect(writes[0]!.trimEnd().split("\n").map((line) => JSON.parse(line).annotations.n)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i)
    )
  })

  it("with batchMs 0, writes the lines of one turn of the event loop together at the next timer", () => {
    const { writes, log, messages } = logging(0)
    log(Effect.logInfo("a"))
    log(Effect.logInfo("b"))
    expect(writes).toEqual([])
    vi.advanceTimersToNextTimer()
    expect(messages(writes[0]!)).toEqual(["a", "b"])
  })

  it("after an early write (an error's), the next line waits its full batchMs", () => {
    const { writes, log, messages } = logging(20)
    log(Effect.logInfo("first"))
    vi.advanceTimersByTime(15)
    log(Effect.logError("broken"))
    log(Effect.logInfo("next"))
    expect(writes).toHaveLength(1)
    // The first line's timer (due at 20) is gone with the error's write: "next" waits until 35.
    writtenAfter(writes, 20)
    expect(messages(writes[1]!)).toEqual(["next"])
  })
})

describe("NodeLogger: nothing lost at exit", () => {
  it("writes the lines still waiting when the process exits, and a waiting line does not keep it alive", () => {
    const logger = fileURLToPath(new URL("../src/NodeLogger.ts", import.meta.url))
    const script = `
      import { Effect } from "effect"
      import * as NodeLogger from ${JSON.stringify(logger)}
      const logs = NodeLogger.make({ format: "json", batchMs: 60_000 })
      Effect.runSync(Effect.provide(Effect.logInfo("waiting"), logs.layer))
      logs.access({ status: 204 })
    `
    const run = spawnSync(process.execPath, ["--conditions=@hosting/source", "--import", "tsx", "--input-type=module", "--eval", script], {
      encoding: "utf8",
      // Far below the batch's minute: a waiting line that held the process would have it killed (status null).
      timeout: 30_000
    })
    expect(run.status, run.stderr).toBe(0)
    const lines = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(lines.map((line) => line.message)).toEqual(["waiting", "request"])
    expect(lines[1].annotations).toEqual({ status: 204 })
  })
})
