/**
 * `hosting files` against the example server on an S3 store (s3rver on
 * loopback, which checks signatures), through a recorder in front of it: the
 * bytes go to the presigned URLs, and the bearer token never goes there.
 */
import S3rver from "@20minutes/s3rver"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "../../../examples/server/test/process.js"
import { runCli } from "./cli.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-cli-s3-"))

/** An HTTP proxy that forwards everything to `port` as it came and records each request's method, path and headers. */
const recorder = async (port: number) => {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = []
  const server = createServer((incoming, outgoing) => {
    seen.push({ method: incoming.method ?? "", url: incoming.url ?? "", headers: incoming.headers })
    const forward = request(
      { host: "127.0.0.1", port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      }
    )
    forward.on("error", () => outgoing.destroy())
    incoming.pipe(forward)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as { port: number }).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe("hosting files on S3 (presigned URLs)", () => {
  let s3: S3rver
  let proxy: Awaited<ReturnType<typeof recorder>>
  let server: Running
  beforeAll(async () => {
    s3 = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: join(dir, "s3") })
    const address = await s3.run()
    proxy = await recorder(address.port)
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_OBJECT_STORE: "s3://hosting-cli",
      HOSTING_S3_ENDPOINT: `http://127.0.0.1:${proxy.port}`,
      HOSTING_S3_CREATE_BUCKET: "true",
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER"
    })
  })
  afterAll(async () => {
    await server?.stop()
    await proxy?.close()
    await s3?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("uploads to the presigned PUT and downloads through the 302, never sending the token to the store", async () => {
    const options = { configDir: join(dir, "config"), env: { HOSTING_BASE_URL: server.baseUrl, HOSTING_TOKEN: "bob-token" } }
    const bytes = Buffer.from("bytes that never pass through the API, ".repeat(2000))
    const source = join(dir, "report.txt")
    writeFileSync(source, bytes)
    const uploaded = await runCli(["files", "upload", "dep-1", source, "--json"], options)
    expect(uploaded.stderr).toContain(`upload report.txt: ${bytes.length}/${bytes.length} bytes (100%)`)
    expect(uploaded.code).toBe(0)
    const key = JSON.parse(uploaded.stdout).key as string

    const into = mkdtempSync(join(dir, "download-"))
    const downloaded = await runCli(["files", "download", "dep-1", key], { ...options, cwd: into })
    expect(downloaded.code).toBe(0)
    expect(Buffer.compare(readFileSync(join(into, "report.txt")), bytes)).toBe(0)

    const put = proxy.seen.find((r) => r.method === "PUT" && r.url.includes("X-Amz-Signature="))
    const get = proxy.seen.find((r) => r.method === "GET" && r.url.includes("X-Amz-Signature="))
    expect(put?.headers["content-length"]).toBe(String(bytes.length))
    expect(put?.headers["content-type"]).toBe("text/plain")
    expect(get).toBeDefined()
    for (const presigned of [put!, get!]) expect(presigned.headers.authorization).toBeUndefined()
  }, 90_000)
})
