/**
 * Files through the example server on an S3 store (s3rver on loopback, which
 * checks signatures): the reservation hands out a presigned PUT, and the
 * download answers 302 to a presigned GET made for the request.
 */
import S3rver from "@20minutes/s3rver"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-s3-"))
const auth = { authorization: "Bearer bob-token" }

describe("files on S3", () => {
  let s3: { close: () => Promise<void> }
  let server: Running
  beforeAll(async () => {
    const s3rver = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: join(dir, "s3") })
    const address = await s3rver.run()
    s3 = s3rver
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_OBJECT_STORE: "s3://hosting-e2e",
      HOSTING_S3_ENDPOINT: `http://127.0.0.1:${address.port}`,
      HOSTING_S3_CREATE_BUCKET: "true",
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER"
    })
  })
  afterAll(async () => {
    await server?.stop()
    await s3?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("uploads through a presigned PUT and downloads through a 302 to a presigned GET", async () => {
    const files = `${server.baseUrl}/deployments/dep-1/files`
    const body = new TextEncoder().encode("bytes that never pass through the API")
    const reserved = await fetch(files, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ filename: "notes.txt", content_type: "text/plain", size: body.length })
    }).then((r) => r.json() as Promise<{ key: string; upload_url: string }>)
    expect(reserved.upload_url).toContain("X-Amz-Signature=")
    expect(reserved.upload_url).not.toContain(server.baseUrl)
    const wrongType = await fetch(reserved.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body })
    expect(wrongType.status).toBe(403)
    const put = await fetch(reserved.upload_url, { method: "PUT", headers: { "content-type": "text/plain" }, body })
    expect(put.status).toBe(200)
    const completed = await fetch(`${files}/${reserved.key}/complete`, { method: "POST", headers: auth }).then((r) => r.json())
    expect(completed).toEqual({ key: reserved.key, status: "ready", size: body.length })
    const redirect = await fetch(`${files}/${reserved.key}/content`, { headers: auth, redirect: "manual" })
    expect(redirect.status).toBe(302)
    const location = redirect.headers.get("location")!
    expect(location).toContain("X-Amz-Expires=")
    const download = await fetch(location)
    expect(download.status).toBe(200)
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(body)
    expect(download.headers.get("content-disposition")).toContain("notes.txt")
    // The presigned URL still takes a PUT (S3 cannot be told otherwise) but a ready file's bytes never change.
    const late = new TextEncoder().encode("other bytes that try to replace the file")
    const latePut = await fetch(reserved.upload_url, { method: "PUT", headers: { "content-type": "text/plain" }, body: late.slice(0, body.length) })
    expect(latePut.status).toBe(200)
    const again = await fetch(`${files}/${reserved.key}/content`, { headers: auth })
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(body)
    const tampered = await fetch(location.replace(/X-Amz-Signature=([0-9a-f])/, (_, c) => `X-Amz-Signature=${c === "0" ? "1" : "0"}`))
    expect(tampered.status).toBe(403)
  }, 60_000)
})
