/**
 * Faults (issue #12): the example server killed with SIGKILL at a random
 * moment of mixed traffic (registering, publishing, sending with reply
 * streams open, uploading and completing files), then started again on the
 * same files. After each restart the database passes SQLite's integrity
 * check, every write the server acknowledged is there, builds and versions
 * agree between the member and public views, no reply is left streaming and
 * a file is either ready with all its bytes or still pending, no temporary
 * file of the file store is left, and the event log agrees with the stored
 * builds (every build and version has its event, every event its build).
 * The moment of each kill comes from a seed that the test prints: run again
 * with HOSTING_FAULTS_SEED=<seed> to replay it. HOSTING_FAULT_ROUNDS sets
 * the number of kills per database: 4 by default (CI), 20 for a long run.
 *
 * On Postgres the same rounds run (replies of the killed process close within
 * seconds of the restart, once the database has ended its session), and a database that refuses connections for a while gives
 * 503 `storage_unavailable` until it is back, then the server answers again.
 */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Effect } from "effect"
import { type Dirent, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "./process.js"
import { type Acknowledged, acknowledged, openStream, random, request, runTraffic, sha256, sleep, tally } from "./traffic.js"

const seed = Number(process.env["HOSTING_FAULTS_SEED"] ?? Date.now() % 2 ** 31)
const rounds = Math.min(Math.max(Number(process.env["HOSTING_FAULT_ROUNDS"] ?? process.env["HOSTING_FAULTS_ROUNDS"] ?? "4"), 1), 50)
const pgAvailable = await TestDatabase.isAvailable()

const dirs: Array<string> = []
const servers: Array<Running> = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop("SIGKILL")))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "hosting-faults-"))
  dirs.push(dir)
  return dir
}

const startServer = async (env: Record<string, string>) => {
  const server = await start(env, 30_000)
  servers.push(server)
  return server
}

/** Whether any file under `root` holds exactly these bytes (object paths are the store's business, not the test's). */
const holds = (root: string, bytes: Uint8Array): boolean => {
  // The server's sweep removes files while this walks them: a file or folder gone meanwhile is not held.
  const gone = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT"
  const walk = (dir: string): boolean => {
    let entries: Array<Dirent>
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch (error) {
      if (gone(error)) return false
      throw error
    }
    return entries.some((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return walk(path)
      if (!entry.isFile()) return false
      try {
        return statSync(path).size === bytes.length && readFileSync(path).equals(bytes)
      } catch (error) {
        if (gone(error)) return false
        throw error
      }
    })
  }
  return walk(root)
}

/** Polls `check` until it returns nothing (no problem), or gives the last problems after `timeoutMs`. */
const settle = async (check: () => Promise<Array<string>>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  let problems = await check()
  while (problems.length > 0 && Date.now() < deadline) {
    await sleep(200)
    problems = await check()
  }
  return problems
}

const chatPath = (conversation: string) => `/deployments/dep-1/messaging/conversations/${conversation}`

/** Builds and versions: every acknowledged one is there, member and public views agree. */
const catalogProblems = async (server: Running, ack: Acknowledged) => {
  const problems: Array<string> = []
  for (const name of ack.agentsTried) {
    const member = await request(server, "GET", `/agents/acme/${name}`, { token: "alice-token" })
    const builds = ack.builds.get(name) ?? new Set<string>()
    const versions = ack.versions.get(name) ?? new Map<string, string>()
    if (member.status === 404) {
      if (builds.size > 0) problems.push(`${name}: acknowledged builds ${[...builds]} are gone`)
      continue
    }
    if (member.status !== 200) {
      problems.push(`${name}: member read answered ${member.status}`)
      continue
    }
    const entries: Array<{ build_id: string; version?: string; published_at?: string }> = member.json.versions
    const ids = entries.map((e) => e.build_id)
    if (new Set(ids).size !== ids.length) problems.push(`${name}: a build appears twice: ${ids}`)
    for (const build of builds) if (!ids.includes(build)) problems.push(`${name}: acknowledged build ${build} is gone`)
    for (const entry of entries) {
      if ((entry.version === undefined) !== (entry.published_at === undefined)) {
        problems.push(`${name}/${entry.build_id}: half published (version ${entry.version}, published_at ${entry.published_at})`)
      }
      const acked = versions.get(entry.build_id)
      if (acked !== undefined && entry.version !== acked) {
        problems.push(`${name}/${entry.build_id}: acknowledged version ${acked}, stored ${entry.version}`)
      }
    }
    const published = entries.filter((e) => e.version !== undefined)
    const versionNames = published.map((e) => e.version)
    if (new Set(versionNames).size !== versionNames.length) problems.push(`${name}: a version names two builds`)
    const anonymous = await request(server, "GET", `/agents/acme/${name}`)
    if (published.length === 0) {
      if (anonymous.status !== 404) problems.push(`${name}: nothing published, yet the public read answered ${anonymous.status}`)
    } else if (anonymous.status !== 200) {
      problems.push(`${name}: published, yet the public read answered ${anonymous.status}`)
    } else {
      const seen = anonymous.json.versions.map((e: { build_id: string }) => e.build_id).sort()
      const expected = published.map((e) => e.build_id).sort()
      if (JSON.stringify(seen) !== JSON.stringify(expected)) {
        problems.push(`${name}: public builds ${seen} differ from the published ones ${expected}`)
      }
    }
  }
  return problems
}

/** Conversations: acknowledged messages are there and no reply is streaming. */
const chatProblems = async (server: Running, ack: Acknowledged) => {
  const problems: Array<string> = []
  const list = await request(server, "GET", "/deployments/dep-1/chat/conversations", { token: "alice-token" })
  if (list.status !== 200) return [`conversation list answered ${list.status}`]
  for (const c of list.json.conversations) {
    if (c.assistant_streaming) problems.push(`conversation ${c.conversation_id} is still assistant_streaming`)
  }
  for (const [conversation, ids] of ack.messages) {
    const history = await request(server, "GET", `${chatPath(conversation)}/messages`, { token: "alice-token" })
    if (history.status !== 200) {
      problems.push(`history of ${conversation} answered ${history.status}`)
      continue
    }
    const messages: Array<{ message_id: string; role: string; status: string }> = history.json.messages
    const stored = new Set(messages.filter((m) => m.role === "user").map((m) => m.message_id))
    for (const id of ids) if (!stored.has(id)) problems.push(`acknowledged message ${id} of ${conversation} is gone`)
    for (const m of messages) if (m.status === "streaming") problems.push(`reply ${m.message_id} of ${conversation} is still streaming`)
  }
  return problems
}

/** Files: completed ones download whole; pending ones cannot be downloaded; no ready file lacks bytes. */
const fileProblems = async (server: Running, ack: Acknowledged) => {
  const problems: Array<string> = []
  for (const [key, expected] of ack.files) {
    const download = await request(server, "GET", `/deployments/dep-1/files/${key}/content`, { token: "alice-token" })
    if (download.status !== 200) problems.push(`completed file ${key} answers ${download.status}`)
    else if (download.bytes.length !== expected.size || sha256(download.bytes) !== expected.sha256) {
      problems.push(`completed file ${key} has other bytes (${download.bytes.length} of ${expected.size})`)
    }
  }
  const list = await request(server, "GET", "/deployments/dep-1/files", { token: "alice-token" })
  if (list.status !== 200) return [...problems, `file list answered ${list.status}`]
  for (const file of list.json.files as Array<{ key: string; status: string; size: number }>) {
    if (file.status === "pending") {
      const download = await request(server, "GET", `/deployments/dep-1/files/${file.key}/content`, { token: "alice-token" })
      if (download.status !== 404) problems.push(`pending file ${file.key} answers ${download.status}, not 404`)
    } else if (file.status === "ready" && !file.key.startsWith("f-notes")) {
      const download = await request(server, "GET", `/deployments/dep-1/files/${file.key}/content`, { token: "alice-token" })
      if (download.status !== 200 || download.bytes.length !== file.size) {
        problems.push(`ready file ${file.key} answers ${download.status} with ${download.bytes.length} of ${file.size} bytes`)
      }
    }
  }
  return problems
}

/** Files left under the file store's temporary folder (parts of uploads a killed process was writing). */
const temporaryFiles = (objects: string): Array<string> => {
  const tmp = join(objects, "tmp")
  if (!existsSync(tmp)) return []
  return (readdirSync(tmp, { recursive: true }) as Array<string>).filter((name) => statSync(join(tmp, name)).isFile())
}

type Rows = Array<Record<string, unknown>>

/** The event log against the stored builds: each build and version has its event, each event its build. */
const eventLogProblems = async (query: (text: string) => Promise<Rows>) => {
  const problems: Array<string> = []
  const builds = await query(
    "SELECT agents.account_id AS account, accounts.name AS account_name, agents.name AS agent, builds.build_id AS build, " +
      "builds.version AS version FROM builds JOIN agents ON agents.id = builds.agent_id JOIN accounts ON accounts.id = agents.account_id"
  )
  const events = (await query("SELECT account_id AS account, data FROM events WHERE type = 'agent.build'")).map((row) => ({
    account: String(row["account"]),
    ...(JSON.parse(String(row["data"])) as { agent: string; build_id: string; status: string; version?: string })
  }))
  const stored = new Map(builds.map((b) => [`${b["account_name"]}/${b["agent"]}#${b["build"]}`, b]))
  for (const b of builds) {
    const name = `${b["account_name"]}/${b["agent"]}`
    const own = events.filter((e) => e.account === b["account"] && e.agent === name && e.build_id === b["build"])
    if (!own.some((e) => e.status === "registered" || e.status === "updated")) problems.push(`build ${name}#${b["build"]} has no event`)
    if (b["version"] !== null && !own.some((e) => e.status === "published" && e.version === b["version"])) {
      problems.push(`version ${b["version"]} of ${name}#${b["build"]} has no published event`)
    }
  }
  for (const e of events) {
    const build = stored.get(`${e.agent}#${e.build_id}`)
    if (build === undefined) problems.push(`event ${e.status} of ${e.agent}#${e.build_id} names no stored build`)
    else if (e.status === "published" && build["version"] !== e.version) {
      problems.push(`event published ${e.version} of ${e.agent}#${e.build_id}, stored version ${build["version"]}`)
    }
  }
  return problems
}

/** Rows of a query on a SQLite file, read while no server has it open. */
const sqliteQuery = (filename: string) => async (text: string): Promise<Rows> => {
  const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string, options: { readonly readonly: boolean }) => {
    prepare: (text: string) => { all: () => Rows }
    close: () => void
  }
  const db = new Database(filename, { readonly: true })
  try {
    return db.prepare(text).all()
  } finally {
    db.close()
  }
}

interface Backend {
  readonly env: Record<string, string>
  /** The file store's folder. */
  readonly objects: string
  /** Runs a query on the database. */
  readonly query: (text: string) => Promise<Rows>
  /** Checks the database itself while no server runs; answers the replies it found streaming. */
  readonly inspect: () => Promise<number | undefined>
  /** How long a restarted server may take to close replies the killed one left streaming. */
  readonly settleMs: number
}

/** The kill-and-restart rounds on a backend; resolves with the last running server. */
const killRounds = async (backend: Backend, label: string) => {
  // The kill moments from their own generator, so that a seed replays them whatever the traffic did.
  const kills = random(seed)
  const rng = random(seed + 1)
  const ack = acknowledged()
  const conversations = Array.from({ length: 4 }, () => crypto.randomUUID())
  let server = await startServer(backend.env)
  let streamingAtKills = 0
  for (let round = 1; round <= rounds; round++) {
    let killed = false
    const killAfter = kills.int(300, 2_000)
    const counts = tally()
    const traffic = runTraffic({
      server,
      rng,
      ack,
      tally: counts,
      prefix: `faults-${label}`,
      stopped: () => killed,
      conversations,
      maxFileBytes: 512 * 1024,
      crashing: true
    })
    await sleep(killAfter)
    killed = true
    await server.stop("SIGKILL")
    // Every request in flight fails once the process is gone; each has its own timeout besides.
    await traffic
    const streaming = await backend.inspect()
    streamingAtKills += streaming ?? 0
    console.log(
      `faults ${label} round ${round}: seed ${seed}, killed after ${killAfter} ms, ${counts.requests} requests, ` +
        `${streaming ?? "?"} replies left streaming`
    )
    expect(counts.unexpected, `unexpected answers before the kill (seed ${seed})`).toEqual([])
    // Read while no server runs: what the kill left, before a start could mend anything.
    expect(await eventLogProblems(backend.query), `event log after the kill of round ${round} (seed ${seed})`).toEqual([])
    server = await startServer(backend.env)
    const problems = [
      ...temporaryFiles(backend.objects).map((name) => `temporary file ${name} left in the file store`),
      ...await catalogProblems(server, ack),
      ...await settle(() => chatProblems(server, ack), backend.settleMs),
      ...await fileProblems(server, ack)
    ]
    expect(problems, `after the kill of round ${round} (seed ${seed}, ${killAfter} ms)`).toEqual([])
  }
  console.log(
    `faults ${label}: ${ack.builds.size} agents, ${[...ack.messages.values()].reduce((n, s) => n + s.size, 0)} messages, ` +
      `${ack.files.size} files acknowledged; ${streamingAtKills} replies were streaming at the kills`
  )
  return server
}

describe("faults on SQLite: kill -9 during mixed traffic, restart on the same files", () => {
  it(`the database passes its checks and the data are consistent after each of ${rounds} kills`, async () => {
    const dir = tempDir()
    const filename = join(dir, "hosting.db")
    const backend: Backend = {
      objects: join(dir, "objects"),
      query: sqliteQuery(filename),
      env: {
        HOSTING_DATABASE_URL: `sqlite:${filename}`,
        HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
        HOSTING_FIXTURES: writeFixtures(dir),
        HOSTING_ECHO_DELAY_MS: "10",
        HOSTING_MESSAGE_LIMIT: "100000"
      },
      inspect: async () => {
        const found = await Effect.runPromise(SqliteStorage.checkFile(filename))
        expect(found.integrity).toEqual(["ok"])
        expect(found.foreignKeyViolations).toBe(0)
        expect(found.journalMode).toBe("wal")
        return found.streamingReplies
      },
      // On SQLite the one process owns the file: a start closes every reply left streaming before it listens.
      settleMs: 0
    }
    const server = await killRounds(backend, "sqlite")
    expect(await server.stop()).toBe(0)
    const after = await Effect.runPromise(SqliteStorage.checkFile(filename))
    expect(after).toEqual({ integrity: ["ok"], foreignKeyViolations: 0, journalMode: "wal", streamingReplies: 0 })
  }, 120_000)

  // Short expiry, grace and sweep interval, so that reservations lapse within the test.
  it("pending uploads past their expiry are removed with their objects by a sweep, at start after a kill and while running", async () => {
    const dir = tempDir()
    const objects = join(dir, "objects")
    const expiryMs = 3_000
    const graceMs = 1_000
    const env = {
      HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`,
      HOSTING_OBJECT_STORE: `fs:${objects}`,
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_UPLOAD_EXPIRY_MS: String(expiryMs),
      HOSTING_UPLOAD_GRACE_MS: String(graceMs),
      HOSTING_FILE_SWEEP_MS: "200"
    }
    let server = await startServer(env)
    const files = "/deployments/dep-1/files"
    const unique = (label: string) => new TextEncoder().encode(`${label}-${crypto.randomUUID()}`)
    const reserve = async (content: Uint8Array) => {
      const r = await request(server, "POST", files, {
        token: "alice-token",
        json: { filename: "part.bin", content_type: "application/octet-stream", size: content.length }
      })
      expect(r.status, r.text).toBe(201)
      return r.json.key as string
    }
    const put = (key: string, content: Uint8Array<ArrayBuffer>) =>
      request(server, "PUT", `${files}/${key}/content`, { token: "alice-token", body: content })
    const complete = (key: string) => request(server, "POST", `${files}/${key}/complete`, { token: "alice-token" })

    // Bytes uploaded but never completed; a completed file; a reservation that never got bytes.
    const partialBytes = unique("partial")
    const partial = await reserve(partialBytes)
    expect((await put(partial, partialBytes)).status).toBe(200)
    const readyBytes = unique("ready")
    const ready = await reserve(readyBytes)
    expect((await put(ready, readyBytes)).status).toBe(200)
    expect((await complete(ready)).status).toBe(200)
    const idle = await reserve(unique("idle"))
    expect(holds(objects, partialBytes)).toBe(true)

    // Killed with the reservations pending; started again once they are past expiry and grace.
    await server.stop("SIGKILL")
    await sleep(expiryMs + graceMs + 200)
    server = await startServer(env)
    const swept = await settle(async () => {
      const problems: Array<string> = []
      // A lapsed reservation still recorded refuses its upload (400); a removed one is not found (404).
      for (const key of [partial, idle]) {
        const again = await put(key, partialBytes)
        if (again.status !== 404) problems.push(`${key} answers ${again.status} ${again.text}, not 404`)
      }
      if (holds(objects, partialBytes)) problems.push(`the bytes of ${partial} are still in the store`)
      return problems
    }, 10_000)
    expect(swept).toEqual([])
    const download = await request(server, "GET", `${files}/${ready}/content`, { token: "alice-token" })
    expect([download.status, sha256(download.bytes)]).toEqual([200, sha256(readyBytes)])
    const listed = await request(server, "GET", files, { token: "alice-token" })
    expect(listed.json.files.map((f: { key: string }) => f.key).sort()).toEqual(["f-notes", ready].sort())

    // On a running server: an upload after expires_at is refused, and the periodic sweep removes what was sent in time.
    const lateBytes = unique("late")
    const late = await reserve(lateBytes)
    const sentBytes = unique("sent")
    const sent = await reserve(sentBytes)
    expect((await put(sent, sentBytes)).status).toBe(200)
    await sleep(expiryMs + 100)
    const refused = await put(late, lateBytes)
    expect(refused.status, refused.text).toBe(400)
    expect(refused.json).toMatchObject({ error: "upload_expired" })
    expect(holds(objects, lateBytes)).toBe(false)
    const sweptLive = await settle(async () => {
      const again = await put(sent, sentBytes)
      return again.status === 404 && !holds(objects, sentBytes) ? [] : [`${sent} answers ${again.status}, its bytes kept: ${holds(objects, sentBytes)}`]
    }, graceMs + 5_000)
    expect(sweptLive).toEqual([])
    expect(await server.stop()).toBe(0)
  }, 60_000)
})

describe.skipIf(!pgAvailable)(
  `faults on Postgres: kill -9 during mixed traffic, database outage${pgAvailable ? "" : ` (skipped: ${TestDatabase.skipReason})`}`,
  () => {
    it(`the data are consistent after each of ${rounds} kills; an outage answers 503 until the database is back`, async () => {
      const database = await TestDatabase.create()
      try {
        const dir = tempDir()
        const backend: Backend = {
          objects: join(dir, "objects"),
          query: database.query,
          env: {
            HOSTING_DATABASE_URL: database.url,
            HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
            HOSTING_FIXTURES: writeFixtures(dir),
            HOSTING_ECHO_DELAY_MS: "10",
            HOSTING_MESSAGE_LIMIT: "100000",
            HOSTING_HEARTBEAT_MS: "1000"
          },
          inspect: async () => Number((await database.query("SELECT count(*) AS n FROM messages WHERE status = 'streaming'"))[0]?.["n"]),
          // With the default 30 s lease: the killed process's replies close because its database session
          // ended (within 2 s of the death; a little more is allowed for a loaded machine), not by the lease.
          settleMs: 3_000
        }
        const server = await killRounds(backend, "pg")

        // The outage: every connection cut and new ones refused. The probe reads the account from storage on every
        // request (`/me` answers from the principal, which a token's check keeps for a second).
        const probe = "/accounts/acme"
        await database.refuseConnections()
        try {
          for (let i = 0; i < 3; i++) {
            const read = await request(server, "GET", probe, { token: "alice-token" })
            expect(read.status, read.text).toBe(503)
            expect(read.json).toMatchObject({ error: "storage_unavailable" })
            expect(read.headers.get("retry-after")).toMatch(/^\d+$/)
            expect(read.text).not.toMatch(/SELECT|postgres|hosting_test|ECONNREFUSED|at /)
          }
        } finally {
          await database.acceptConnections()
        }
        const back = await settle(async () => {
          const read = await request(server, "GET", probe, { token: "alice-token" })
          return read.status === 200 ? [] : [`${probe} answers ${read.status} after the outage: ${read.text}`]
        }, 15_000)
        expect(back).toEqual([])
        // Writes work again, and the account's event stream hears them (its listener reconnected).
        const stream = openStream(server, "/accounts/acme/events", "bob-token")
        try {
          await sleep(300)
          const registered = await request(server, "POST", "/agents/acme/after-outage/register", {
            token: "alice-token",
            json: { build_id: "b-after", registry: "ghcr.io/acme", spec_content: "name: after-outage\ndescription: d\n" }
          })
          expect(registered.status, registered.text).toBe(201)
          const heard = await settle(async () => stream.state.names.includes("agent.build") ? [] : ["no agent.build event yet"], 10_000)
          expect(heard, `events seen: ${stream.state.names}`).toEqual([])
        } finally {
          await stream.close()
        }
        expect(await server.stop()).toBe(0)
      } finally {
        await database.drop()
      }
    }, 180_000)
  }
)
