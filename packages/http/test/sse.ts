/**
 * Test helpers for event streams: a raw SSE reader over fetch, and a
 * loopback TCP proxy that can drop its connections the way a server or a
 * network would.
 */
import { createServer, type Server, type Socket, connect } from "node:net"

export interface SseEvent {
  readonly event: string
  readonly id: string | undefined
  readonly retry: number | undefined
  readonly data: any
}

/** Parses complete SSE frames out of a buffer; returns the events and what is left. */
export const parseFrames = (buffer: string): { events: Array<SseEvent>; rest: string } => {
  const events: Array<SseEvent> = []
  let rest = buffer
  let end = rest.indexOf("\n\n")
  while (end !== -1) {
    const block = rest.slice(0, end)
    rest = rest.slice(end + 2)
    const fields: Record<string, string> = {}
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue
      const colon = line.indexOf(":")
      const key = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "")
      fields[key] = key === "data" && fields[key] !== undefined ? `${fields[key]}\n${value}` : value
    }
    // As in the SSE spec, a block without data (a lone `retry:`) dispatches no event.
    if (fields["data"] === undefined) {
      end = rest.indexOf("\n\n")
      continue
    }
    events.push({
      event: fields["event"] ?? "message",
      id: fields["id"],
      retry: fields["retry"] === undefined ? undefined : Number(fields["retry"]),
      data: fields["data"] === undefined ? undefined : JSON.parse(fields["data"])
    })
    end = rest.indexOf("\n\n")
  }
  return { events, rest }
}

/** An open raw SSE connection. */
export interface RawStream {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  /** Waits for the next `count` events (heartbeats included), failing after `timeoutMs`. */
  readonly next: (count: number, timeoutMs?: number) => Promise<Array<SseEvent>>
  /** Events received so far and not yet taken. */
  readonly pending: () => Array<SseEvent>
  readonly close: () => void
}

/** Opens a stream with fetch; a non-200 answer resolves with its JSON body and no events. */
export const open = async (url: string, headers: Record<string, string> = {}): Promise<RawStream> => {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  const queue: Array<SseEvent> = []
  const waiters: Array<() => void> = []
  if (response.status !== 200) {
    const body = await response.json()
    return { status: response.status, headers: response.headers, body, next: async () => [], pending: () => [], close: () => {} }
  }
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  void (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        const parsed = parseFrames(buffer)
        buffer = parsed.rest
        queue.push(...parsed.events)
        waiters.splice(0).forEach((wake) => wake())
      }
    } catch {
      // aborted or dropped
    }
  })()
  const next = async (count: number, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs
    while (queue.length < count) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`expected ${count} events, got ${queue.length}: ${JSON.stringify(queue)}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    return queue.splice(0, count)
  }
  return { status: 200, headers: response.headers, body: undefined, next, pending: () => queue.splice(0), close: () => controller.abort() }
}

/** A TCP proxy on loopback in front of `port`; `dropAll` cuts every open connection. */
export const proxy = async (port: number) => {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1")
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
      s.on("error", () => s.destroy())
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return {
    port: typeof address === "object" && address ? address.port : 0,
    connections: () => sockets.size / 2,
    dropAll: () => sockets.forEach((s) => s.destroy()),
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy())
        server.close(() => resolve())
      })
  }
}
