// A large download: a 200 MB file uploaded through the API (reserve, PUT,
// complete), then downloaded by a client that reads at a bounded rate, so a
// server that ignores backpressure would have to buffer. The server's RSS is
// sampled every 20 ms; growth = the highest sample minus the RSS before.
import { randomFillSync } from "node:crypto"
import { closeSync, createReadStream, openSync, writeSync } from "node:fs"
import { get, request } from "node:http"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import { rss, sampleRss } from "../lib/proc.mjs"
import { auth, apiOk, deployment, startBaseline, startExample, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, mb, median, now, ratio } from "../lib/util.mjs"

const MB = 1024 * 1024

/** Writes `size` bytes of random data (one random MiB repeated) to `path`. */
const writeFile = (path, size) => {
  const block = randomFillSync(Buffer.alloc(MB))
  const fd = openSync(path, "w")
  try {
    for (let written = 0; written < size; written += MB) writeSync(fd, block, 0, Math.min(MB, size - written))
  } finally {
    closeSync(fd)
  }
}

/** Uploads `path` as a new file of dep-1 through the API; resolves with its key. */
const upload = async (base, path, size) => {
  const reserved = await apiOk(base, "POST", `/deployments/${deployment}/files`, {
    body: { filename: "bench.bin", content_type: "application/octet-stream", size }
  })
  const { key, upload_url } = reserved.json
  await new Promise((resolve, reject) => {
    const req = request(upload_url, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/octet-stream", "content-length": size }
    }, (res) => {
      res.resume()
      res.on("end", () => (res.statusCode < 300 ? resolve() : reject(new Error(`upload answered ${res.statusCode}`))))
    })
    req.setTimeout(120_000, () => req.destroy(new Error("upload timed out")))
    pipeline(createReadStream(path), req).catch(reject)
  })
  await apiOk(base, "POST", `/deployments/${deployment}/files/${key}/complete`)
  return key
}

/** Downloads `url`, reading at most `bytesPerSecond`; resolves with the byte count and seconds. */
const download = (url, bytesPerSecond, timeoutMs) =>
  new Promise((resolve, reject) => {
    const started = now()
    let bytes = 0
    const req = get(url, { headers: auth }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        return reject(new Error(`download answered ${res.statusCode}`))
      }
      res.on("data", (chunk) => {
        bytes += chunk.length
        const ahead = started + (bytes / bytesPerSecond) * 1000 - now()
        if (ahead > 2) {
          res.pause()
          setTimeout(() => res.resume(), ahead)
        }
      })
      res.on("end", () => resolve({ bytes, seconds: (now() - started) / 1000 }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.setTimeout(timeoutMs, () => req.destroy(new Error("download timed out")))
  })

export default {
  name: "download",
  title: "large file download: server RSS growth",
  needs: ["better-sqlite3"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const size = scale.fileMB * MB
    const file = join(dir, "bench.bin")
    writeFile(file, size)
    const example = await startExample(ctx, { dir, fixtures: writeFixtures(dir) })
    ctx.log(`uploading ${scale.fileMB} MB to the example server`)
    const key = await upload(example.url, file, size)
    const bare = await startBaseline(ctx, "bare", {
      dir,
      seed: writeBaselineSeed(dir, {
        files: [{ deployment, key, owner: "alice", path: file, filename: "bench.bin", content_type: "application/octet-stream" }]
      })
    })
    const targets = [example, bare]
    const rate = scale.downloadMBs * MB
    const timeoutMs = (size / rate) * 1000 + 60_000
    const once = async (target) => {
      const before = rss(target.pid)
      const memory = sampleRss(target.pid, 20)
      const result = await download(`${target.url}/deployments/${deployment}/files/${key}/content`, rate, timeoutMs)
      const { max } = memory.stop()
      if (result.bytes !== size) throw new Error(`${target.name} sent ${result.bytes} bytes of ${size}`)
      return { before, growth: max - before, mbPerS: result.bytes / MB / result.seconds }
    }
    for (const target of targets) {
      ctx.log(`warm-up ${target.name}`)
      await once(target)
    }
    const rounds = Object.fromEntries(targets.map((t) => [t.name, []]))
    for (let r = 1; r <= scale.downloadRounds; r++) {
      for (const target of targets) {
        const result = await once(target)
        rounds[target.name].push(result)
        ctx.log(`round ${r} ${target.name}: RSS +${mb(result.growth)} MB, ${fmt(result.mbPerS)} MB/s`)
      }
    }
    const s = Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, {
      before: median(list.map((r) => r.before)),
      growth: Math.max(...list.map((r) => r.growth)),
      mbPerS: median(list.map((r) => r.mbPerS))
    }]))
    return {
      detail: `${scale.fileMB} MB file, client reading at most ${scale.downloadMBs} MB/s, ${scale.downloadRounds} rounds`,
      columns: ["target", "MB/s", "RSS before MB", "max RSS growth MB", "growth vs bare"],
      rows: targets.map(({ name }) => [name, fmt(s[name].mbPerS), mb(s[name].before), mb(s[name].growth),
        ratio(s[name].growth, s.bare.growth)]),
      goals: [
        goal(`RSS growth during a ${scale.fileMB} MB download`, `${mb(s.example.growth)} MB`, "<= 50 MB",
          s.example.growth <= 50 * MB)
      ],
      raw: rounds
    }
  }
}
