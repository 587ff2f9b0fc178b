/**
 * A 200 MB upload and download through the example server (file-system
 * store) keep the server's resident memory growth under 50 MB: bytes stream
 * through, they are never held whole.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "./process.js"

const size = 200 * 1024 * 1024
const dir = mkdtempSync(join(tmpdir(), "hosting-large-"))
const fixtures = writeFixtures(dir)

/** Resident set size of a process, in bytes (Linux). */
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024

/** Samples a process's RSS every 20 ms while `work` runs; resolves with the highest value seen. */
const peakRss = async (pid: number, work: () => Promise<void>) => {
  let peak = rss(pid)
  const timer = setInterval(() => (peak = Math.max(peak, rss(pid))), 20)
  try {
    await work()
  } finally {
    clearInterval(timer)
  }
  return Math.max(peak, rss(pid))
}

/** A generated body of `total` bytes, in 64 KiB chunks. */
const generated = (total: number) => {
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close()
      const n = Math.min(64 * 1024, total - sent)
      controller.enqueue(new Uint8Array(n).fill(sent % 251))
      sent += n
    }
  })
}

describe("large files", () => {
  let server: Running
  const auth = { authorization: "Bearer alice-token" }
  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: `sqlite:${join(dir, "db.sqlite")}`,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_FIXTURES: fixtures
    })
  })
  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  const reserve = (files: string, bytes: number) =>
    fetch(files, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ filename: "big.bin", content_type: "application/octet-stream", size: bytes })
    }).then((r) => r.json() as Promise<{ key: string; upload_url: string }>)

  it("uploading and downloading a 200 MB file grows the server's RSS by less than 50 MB", async () => {
    const pid = server.child.pid!
    const files = `${server.baseUrl}/deployments/dep-1/files`
    // A 50 MB round first: the first large transfer grows the heap and buffer pools once, to a
    // plateau that does not depend on the file's size. What must not happen is growth with the size.
    const warmUp = await reserve(files, 50 * 1024 * 1024)
    await fetch(warmUp.upload_url, { method: "PUT", headers: auth, body: generated(50 * 1024 * 1024), duplex: "half" } as RequestInit)
    await fetch(`${files}/${warmUp.key}/complete`, { method: "POST", headers: auth })
    await (await fetch(`${files}/${warmUp.key}/content`, { headers: auth })).arrayBuffer()
    const reserved = await reserve(files, size)
    const before = rss(pid)
    const uploadPeak = await peakRss(pid, async () => {
      const response = await fetch(reserved.upload_url, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/octet-stream" },
        body: generated(size),
        duplex: "half"
      } as RequestInit)
      expect(response.status).toBe(200)
    })
    const completed = await fetch(`${files}/${reserved.key}/complete`, { method: "POST", headers: auth }).then((r) => r.json())
    expect(completed).toEqual({ key: reserved.key, status: "ready", size })
    let received = 0
    const downloadPeak = await peakRss(pid, async () => {
      const response = await fetch(`${files}/${reserved.key}/content`, { headers: auth })
      expect(response.headers.get("content-length")).toBe(String(size))
      const reader = response.body!.getReader()
      while (true) {
        const { done, value } = await reader.read()
        if (done) break
        received += value.length
      }
    })
    expect(received).toBe(size)
    expect(uploadPeak - before).toBeLessThan(50 * 1024 * 1024)
    expect(downloadPeak - before).toBeLessThan(50 * 1024 * 1024)
  }, 120_000)
})
