/**
 * Mixed traffic against a running example server, for the fault and soak
 * tests: catalog writes and reads, sends with the reply stream open, account
 * event streams, uploads and downloads. Every write the server acknowledged
 * is recorded, so that a test can check afterwards that it is still there.
 */
import { createHash } from "node:crypto"
import type { Running } from "./process.js"

/** Reads a server-sent event body to its end, handing over each event's block of lines. */
export const readSseBlocks = async (body: ReadableStream<BufferSource>, onBlock: (block: string) => void) => {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  while (true) {
    const { done, value } = await reader.read()
    if (done) return
    buffer += value
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      onBlock(buffer.slice(0, end))
      buffer = buffer.slice(end + 2)
    }
  }
}

/** A small seeded generator (mulberry32), so that a failing run can be replayed from its seed. */
export const random = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    /** A whole number from `min` to `max`, both included. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    bytes: (n: number) => {
      const out = new Uint8Array(n)
      for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256)
      return out
    }
  }
}

export type Random = ReturnType<typeof random>

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A fetch that gives up after `timeoutMs`; answers status, headers and the body's text. */
export const request = async (
  server: Running,
  method: string,
  path: string,
  options: { readonly token?: string; readonly json?: unknown; readonly body?: Uint8Array<ArrayBuffer>; readonly timeoutMs?: number } = {}
) => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  let body: BodyInit | undefined
  if (options.json !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.json)
  } else if (options.body !== undefined) {
    headers["content-type"] = "application/octet-stream"
    body = options.body
  }
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000)
  })
  const bytes = new Uint8Array(await response.arrayBuffer())
  const text = new TextDecoder().decode(bytes)
  let json: any = undefined
  try {
    json = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, bytes, text, json }
}

/**
 * Opens a server-sent stream and reads it until closed; counts its events.
 * Never throws: a stream cut by a killed server just ends.
 */
export const openStream = (server: Running, path: string, token: string) => {
  const controller = new AbortController()
  const state = { events: 0, status: 0, ended: false, names: [] as Array<string> }
  let markOpened = () => {}
  const opened = new Promise<void>((resolve) => (markOpened = resolve))
  const done = (async () => {
    try {
      const response = await fetch(`${server.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal
      })
      state.status = response.status
      markOpened()
      if (response.body === null) return
      await readSseBlocks(response.body, (block) => {
        const name = /^event: (.*)$/m.exec(block)?.[1]
        if (name !== undefined) {
          state.events++
          if (state.names.length < 50) state.names.push(name)
        }
      })
    } catch {
      // aborted, or the server went away
    } finally {
      state.ended = true
      markOpened()
    }
  })()
  return {
    state,
    /** Resolves once the answer's headers arrived, or the stream failed. */
    opened,
    close: async () => {
      controller.abort()
      await done
    }
  }
}

/** The writes the server acknowledged, to look for after a crash. */
export interface Acknowledged {
  /** agent name -> build ids registered (201). */
  readonly builds: Map<string, Set<string>>
  /** agent name -> build id -> version published (201). */
  readonly versions: Map<string, Map<string, string>>
  /** Every agent name a register was sent for, answered or not. */
  readonly agentsTried: Set<string>
  /** conversation id -> user message ids acknowledged (200). */
  readonly messages: Map<string, Set<string>>
  /** file key -> hash and size of the bytes, for files completed (200). */
  readonly files: Map<string, { readonly sha256: string; readonly size: number }>
  /** Keys of files reserved and never completed. */
  readonly pending: Set<string>
}

export const acknowledged = (): Acknowledged => ({
  builds: new Map(),
  versions: new Map(),
  agentsTried: new Set(),
  messages: new Map(),
  files: new Map(),
  pending: new Set()
})

const add = <K, V>(map: Map<K, Set<V>>, key: K, value: V) => {
  const set = map.get(key) ?? new Set<V>()
  set.add(value)
  map.set(key, set)
}

/** Answers that are not errors for the traffic below; anything else is a finding. */
export interface Tally {
  readonly statuses: Map<string, number>
  /** Unexpected answers (status and route), a few kept for the report. */
  readonly unexpected: Array<string>
  requests: number
}

export const tally = (): Tally => ({ statuses: new Map(), unexpected: [], requests: 0 })

const count = (t: Tally, label: string, status: number, ok: boolean, detail = "") => {
  t.requests++
  const key = `${label} ${status}`
  t.statuses.set(key, (t.statuses.get(key) ?? 0) + 1)
  if (!ok && t.unexpected.length < 20) t.unexpected.push(`${key} ${detail.slice(0, 200)}`)
}

export interface TrafficOptions {
  readonly server: Running
  readonly rng: Random
  readonly ack: Acknowledged
  readonly tally: Tally
  /** A prefix for agent names, unique per run. */
  readonly prefix: string
  /** The workers stop starting new work once this returns true. */
  readonly stopped: () => boolean
  /** Conversations reused by the chat worker (so that the message limit is not reached, keep it several). */
  readonly conversations: ReadonlyArray<string>
  /** Largest uploaded file. */
  readonly maxFileBytes?: number
  /** Pause between the steps of a worker. */
  readonly pauseMs?: number
  /** When the server may die at any moment: network errors end a worker quietly. */
  readonly crashing?: boolean
}

const chatPath = (conversation: string) => `/deployments/dep-1/messaging/conversations/${conversation}`

/** Registers builds and publishes some of them; reads the agent back now and then. */
const catalogWorker = async (o: TrafficOptions, worker: number) => {
  let n = 0
  while (!o.stopped()) {
    n++
    const name = `${o.prefix}-${worker}-${n % 4}`
    const build = `b-${worker}-${n}`
    o.ack.agentsTried.add(name)
    const registered = await request(o.server, "POST", `/agents/acme/${name}/register`, {
      token: "alice-token",
      json: { build_id: build, registry: "ghcr.io/acme", spec_content: `name: ${name}\ndescription: build ${n}\n`, readme: `# ${name}` }
    })
    count(o.tally, "register", registered.status, registered.status === 201, registered.text)
    if (registered.status !== 201) continue
    add(o.ack.builds, name, build)
    if (o.rng.next() < 0.5) {
      const version = `1.${worker}.${n}`
      const published = await request(o.server, "POST", `/agents/acme/${name}/publish`, {
        token: "alice-token",
        json: { build_id: build, version }
      })
      count(o.tally, "publish", published.status, published.status === 201, published.text)
      if (published.status === 201) {
        const versions = o.ack.versions.get(name) ?? new Map<string, string>()
        versions.set(build, version)
        o.ack.versions.set(name, versions)
      }
    }
    const read = await request(o.server, "GET", `/agents/acme/${name}`, { token: "bob-token" })
    count(o.tally, "agent read", read.status, read.status === 200, read.text)
    const list = await request(o.server, "GET", `/agents?q=${o.prefix}&limit=20`)
    count(o.tally, "catalog list", list.status, list.status === 200, list.text)
    if (o.pauseMs) await sleep(o.pauseMs)
  }
}

/** Sends messages to a few conversations while their reply streams are open. */
const chatWorker = async (o: TrafficOptions, worker: number) => {
  let n = 0
  while (!o.stopped()) {
    n++
    const conversation = o.conversations[(worker + n) % o.conversations.length]!
    const stream = openStream(o.server, `${chatPath(conversation)}/stream`, "alice-token")
    try {
      const words = Array.from({ length: o.rng.int(3, 30) }, (_, i) => `w${n}.${i}`).join(" ")
      const sent = await request(o.server, "POST", `${chatPath(conversation)}/messages`, {
        token: "alice-token",
        json: { content: words }
      })
      count(o.tally, "send", sent.status, sent.status === 200, sent.text)
      if (sent.status === 200) add(o.ack.messages, conversation, sent.json.message_id)
      // Let part of the reply stream (the echo agent sends a word every few ms).
      await sleep(o.rng.int(20, 400))
      const history = await request(o.server, "GET", `${chatPath(conversation)}/messages`, { token: "alice-token" })
      count(o.tally, "history", history.status, history.status === 200, history.text)
    } finally {
      await stream.close()
    }
    if (o.pauseMs) await sleep(o.pauseMs)
  }
}

/** Reserves, uploads, completes and downloads files; leaves some reservations pending. */
const fileWorker = async (o: TrafficOptions) => {
  const max = o.maxFileBytes ?? 256 * 1024
  while (!o.stopped()) {
    const bytes = o.rng.bytes(o.rng.int(1, max))
    const reserved = await request(o.server, "POST", "/deployments/dep-1/files", {
      token: "alice-token",
      json: { filename: "data.bin", content_type: "application/octet-stream", size: bytes.length }
    })
    count(o.tally, "reserve", reserved.status, reserved.status === 201, reserved.text)
    if (reserved.status !== 201) continue
    const key: string = reserved.json.key
    o.ack.pending.add(key)
    if (o.rng.next() < 0.15) continue // left pending on purpose
    const put = await request(o.server, "PUT", `/deployments/dep-1/files/${key}/content`, { token: "alice-token", body: bytes })
    count(o.tally, "upload", put.status, put.status === 200 || put.status === 204, put.text)
    const completed = await request(o.server, "POST", `/deployments/dep-1/files/${key}/complete`, { token: "alice-token" })
    count(o.tally, "complete", completed.status, completed.status === 200, completed.text)
    if (completed.status !== 200) continue
    o.ack.pending.delete(key)
    o.ack.files.set(key, { sha256: sha256(bytes), size: bytes.length })
    const download = await request(o.server, "GET", `/deployments/dep-1/files/${key}/content`, { token: "alice-token" })
    const same = download.status === 200 && sha256(download.bytes) === sha256(bytes)
    count(o.tally, "download", download.status, same, same ? "" : "bytes differ")
    if (o.pauseMs) await sleep(o.pauseMs)
  }
}

/** Holds the account's event stream open, reconnecting now and then; starts device logins. */
const eventsWorker = async (o: TrafficOptions) => {
  while (!o.stopped()) {
    const stream = openStream(o.server, "/accounts/acme/events", "bob-token")
    await Promise.race([stream.opened, sleep(15_000)])
    await sleep(o.rng.int(100, 600))
    await stream.close()
    if (stream.state.status === 0 && o.crashing && o.stopped()) return
    count(o.tally, "event stream", stream.state.status, stream.state.status === 200)
    const code = await fetch(`${o.server.baseUrl}/oauth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: "faults" }),
      signal: AbortSignal.timeout(15_000)
    })
    await code.arrayBuffer()
    count(o.tally, "device code", code.status, code.status === 200)
  }
}

/** Runs every worker until `stopped()`; with `crashing`, a network error ends a worker quietly. */
export const runTraffic = async (o: TrafficOptions, workers = { catalog: 2, chat: 2, files: 1, events: 1 }) => {
  const guard = (work: Promise<void>) =>
    work.catch((error: unknown) => {
      if (!o.crashing) throw error
    })
  await Promise.all([
    ...Array.from({ length: workers.catalog }, (_, i) => guard(catalogWorker(o, i))),
    ...Array.from({ length: workers.chat }, (_, i) => guard(chatWorker(o, i))),
    ...Array.from({ length: workers.files }, () => guard(fileWorker(o))),
    ...Array.from({ length: workers.events }, () => guard(eventsWorker(o)))
  ])
}
