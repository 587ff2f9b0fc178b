/**
 * Soak (issue #12): mixed traffic against a started example server for a
 * bounded time (HOSTING_SOAK_SECONDS, 60 by default; set it higher for a
 * longer run): catalog reads and writes, sends with their reply streams
 * open, account event streams held open and reconnected, device logins,
 * uploads and downloads. No answer may be an error; once the clients are
 * gone the server's file descriptors come back to what they were at rest,
 * and its resident memory grows by less than a bound that a leak per request
 * or per stream would pass.
 *
 * Memory is read from /proc and compared at rest (after a warm-up, and at the
 * end), with generous bounds: the machine may be loaded and V8 collects when
 * it likes. A leak of a stream's state, a socket or a request's body shows
 * well above them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "./process.js"
import { acknowledged, openStream, random, request, runTraffic, sleep, tally } from "./traffic.js"

const linux = process.platform === "linux"
const seconds = Math.min(Math.max(Number(process.env["HOSTING_SOAK_SECONDS"] ?? "60"), 20), 3_600)
const seed = Number(process.env["HOSTING_SOAK_SEED"] ?? Date.now() % 2 ** 31)
/** Account event streams held open for the whole of each phase, beside the ones the workers open and close. */
const heldStreams = 20

const dir = mkdtempSync(join(tmpdir(), "hosting-soak-"))
let server: Running | undefined
afterAll(async () => {
  await server?.stop("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

const pidOf = (s: Running) => s.child.pid!
const rssBytes = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024
const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** The server at rest: fds once they stop falling (bounded wait), and memory then. */
const atRest = async (pid: number, fdCeiling?: number) => {
  let fds = openFds(pid)
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    await sleep(500)
    const now = openFds(pid)
    if (now >= fds && (fdCeiling === undefined || now <= fdCeiling)) {
      fds = now
      break
    }
    fds = now
  }
  return { fds, rss: rssBytes(pid) }
}

/** Runs the traffic for `ms` with `heldStreams` event streams open throughout; closes everything after. */
const phase = async (s: Running, ms: number, label: string, rngSeed: number) => {
  const counts = tally()
  const held = Array.from({ length: heldStreams }, () => openStream(s, "/accounts/acme/events", "bob-token"))
  let stop = false
  const rss: Array<number> = []
  const sampler = setInterval(() => rss.push(rssBytes(pidOf(s))), 2_000)
  const traffic = runTraffic({
    server: s,
    rng: random(rngSeed),
    ack: acknowledged(),
    tally: counts,
    prefix: `soak-${label}`,
    stopped: () => stop,
    conversations: Array.from({ length: 8 }, () => crypto.randomUUID()),
    pauseMs: 5
  })
  await sleep(ms)
  stop = true
  await traffic
  clearInterval(sampler)
  const heldStatuses = held.map((h) => h.state.status)
  const heldEnded = held.filter((h) => h.state.ended).length
  await Promise.all(held.map((h) => h.close()))
  return { counts, rss, heldStatuses, heldEnded }
}

describe.skipIf(!linux)(`soak: ${seconds} s of mixed traffic${linux ? "" : " (skipped: reads memory and descriptors from /proc, Linux only)"}`, () => {
  it("no error answers; descriptors back to rest after the clients close; memory growth bounded", async () => {
    server = await start({
      HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_ECHO_DELAY_MS: "5",
      HOSTING_MESSAGE_LIMIT: "1000000",
      HOSTING_HEARTBEAT_MS: "2000",
      // A fixed heap ceiling: V8 then collects instead of growing its heap lazily, so resident
      // memory at rest tracks what is live; a leak grows past the bound (or ends in a crash).
      NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --max-old-space-size=192`.trim()
    }, 30_000)
    const pid = pidOf(server)
    const started = await atRest(pid)

    // Warm-up: code paths compiled, caches and pools filled.
    const warmMs = Math.round(seconds * 1000 * 0.25)
    const warm = await phase(server, warmMs, "warm", seed)
    const rest = await atRest(pid)
    const mainMs = seconds * 1000 - warmMs
    const main = await phase(server, mainMs, "main", seed + 1)
    const end = await atRest(pid, rest.fds + 2)

    const requests = main.counts.requests
    const growth = end.rss - rest.rss
    const peak = Math.max(...main.rss, end.rss)
    console.log(
      `soak (seed ${seed}): warm-up ${warm.counts.requests} requests, then ${requests} in ${mainMs / 1000} s ` +
        `(${Math.round(requests / (mainMs / 1000))}/s); fds ${started.fds} at start, ${rest.fds} after warm-up, ${end.fds} at the end; ` +
        `RSS ${mb(rest.rss)} after warm-up, peak ${mb(peak)}, ${mb(end.rss)} at the end (${mb(growth)})`
    )
    console.log(`soak statuses: ${JSON.stringify(Object.fromEntries(main.counts.statuses))}`)

    expect([...warm.counts.unexpected, ...main.counts.unexpected], `error answers (seed ${seed})`).toEqual([])
    expect(warm.heldStatuses.every((s) => s === 200) && main.heldStatuses.every((s) => s === 200)).toBe(true)
    // Held streams stayed open until the clients closed them.
    expect(warm.heldEnded + main.heldEnded).toBe(0)
    expect(requests).toBeGreaterThan(100)

    // Every socket, stream and file handle of the run was released.
    expect(end.fds, `descriptors: ${rest.fds} at rest after warm-up, ${end.fds} at the end`).toBeLessThanOrEqual(rest.fds + 2)
    // 48 MB of slack for the collector's moods, plus 1 KB per request: a leak of a
    // stream's state or a request body per request passes it within a minute.
    const bound = 48 * 1024 * 1024 + 1024 * requests
    expect(growth, `RSS grew ${mb(growth)} over ${requests} requests (bound ${mb(bound)})`).toBeLessThan(bound)

    // Still answering normally after all that.
    expect((await request(server, "GET", "/me", { token: "alice-token" })).status).toBe(200)
    expect(await server.stop()).toBe(0)
  }, (seconds + 90) * 1000)
})
