/**
 * The container image (issue 27): the repository's Containerfile, built with
 * Debian's podman and run. No image registry is reachable here, so both
 * images the Containerfile starts from are made on this machine:
 *
 * - the final stage's base by ../shared/tools/container-base.sh: this
 *   machine's node and the libraries it links, a user 1000, nothing else
 *   (no shell, npm or compiler);
 * - the build stage's image: an empty root whose /bin, /lib, ... point into
 *   /usr, with the machine's /usr mounted read-only into the build's steps,
 *   so its shell, node, npm, python3, make, g++ and tini are there. The npm
 *   registry is reachable; the machine's pnpm store is mounted as the
 *   build's store, so installing copies rather than downloads.
 *
 * Containers run as these machines allow: runc (crun cannot use their
 * cgroups), the host's network (the server listens on 127.0.0.1 only), and
 * rlimits no higher than they are (raising them is not permitted). Without
 * podman the suite is skipped with the reason, unless
 * HOSTING_TEST_CONTAINERS_REQUIRED=1 (CI, once it could run a container).
 */
import { execFile, execFileSync, spawn } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "./process.js"
import { sleep } from "./traffic.js"

const repo = fileURLToPath(new URL("../../..", import.meta.url))
const baseTool = join(repo, "..", "shared", "tools", "container-base.sh")

const commandWorks = (command: string, args: ReadonlyArray<string>) => {
  try {
    execFileSync(command, args, { stdio: "ignore", timeout: 30_000 })
    return true
  } catch {
    return false
  }
}

/** Why the image cannot be built and run here; undefined: it can. */
const unavailable = !commandWorks("podman", ["--version"])
  ? "podman is not installed (apt-get install -y podman buildah runc)"
  : !commandWorks("runc", ["--version"])
  ? "runc is not installed (apt-get install -y runc)"
  : !existsSync("/usr/bin/tini-static")
  ? "Debian's tini is not installed (apt-get install -y tini): the build stage takes its tini-static from this machine's /usr"
  : !existsSync(baseTool)
  ? `${baseTool} (which makes the local base image) is not there`
  : undefined
if (unavailable !== undefined && process.env["HOSTING_TEST_CONTAINERS_REQUIRED"] === "1") {
  throw new Error(`HOSTING_TEST_CONTAINERS_REQUIRED=1 but ${unavailable}`)
}

/** Names of this run's images and containers, so runs side by side do not meet. */
const run = `${process.pid}-${Date.now().toString(36)}`
const images = {
  base: `localhost/hosting-test-base:${run}`,
  build: `localhost/hosting-test-build:${run}`,
  server: `localhost/hosting-test-server:${run}`
}
const containers: Array<string> = []
const dir = mkdtempSync(join(tmpdir(), "hosting-container-"))

/** The runtime and limits these machines need for any container (see the file's comment). */
const runtime = ["--runtime", "runc"]
const limits = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]

interface Finished {
  readonly code: number | null
  readonly output: string
}

/** Runs podman to its end (killed after `timeoutMs`); resolves with its exit code and output (the last 64 KB). */
const podman = (args: ReadonlyArray<string>, timeoutMs = 60_000) =>
  new Promise<Finished>((resolve, reject) => {
    const child = spawn("podman", args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const keep = (data: Buffer) => (output = (output + data).slice(-65_536))
    child.stdout.on("data", keep)
    child.stderr.on("data", keep)
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`podman ${args.join(" ")}: no end within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

/** Runs podman and fails unless it exits with 0; resolves with its output. */
const podmanOk = async (args: ReadonlyArray<string>, timeoutMs?: number) => {
  const { code, output } = await podman(args, timeoutMs)
  if (code !== 0) throw new Error(`podman ${args.join(" ")} exited with ${code}:\n${output}`)
  return output
}

/** The machine's pnpm store, mounted as the build's store; undefined: the build keeps a cache of its own. */
const pnpmStore = () =>
  new Promise<string | undefined>((resolve) =>
    execFile("npx", ["-y", "pnpm@10", "store", "path"], { cwd: repo, timeout: 60_000 }, (error, stdout) => {
      const path = stdout.trim().replace(/\/v\d+$/, "")
      resolve(error === null && existsSync(path) ? path : undefined)
    })
  )

/**
 * The build stage's image: a root with /bin, /sbin, /lib and /lib64 pointing
 * into /usr (mounted from the machine at build time), root's home with an
 * npm setting that has node-gyp take Node's headers from /usr/include (no
 * download), CA certificates, and /tmp.
 */
const importBuildImage = async () => {
  const root = join(dir, "build-root")
  for (const path of ["usr", "etc/ssl/certs", "root", "tmp"]) mkdirSync(join(root, path), { recursive: true, mode: 0o755 })
  for (const link of ["bin", "sbin", "lib", "lib64"]) symlinkSync(`usr/${link}`, join(root, link))
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0::/root:/bin/sh\n")
  writeFileSync(join(root, "etc/group"), "root:x:0:\n")
  writeFileSync(join(root, "root/.npmrc"), "nodedir=/usr\n")
  const certificates = "/etc/ssl/certs/ca-certificates.crt"
  if (existsSync(certificates)) copyFileSync(certificates, join(root, certificates))
  chmodSync(join(root, "tmp"), 0o1777)
  execFileSync("tar", ["-C", root, "-cf", join(dir, "build-root.tar"), "."])
  await podmanOk(["import", join(dir, "build-root.tar"), images.build])
}

/** A container of the image, started detached on the host's network; resolves with its name. */
const startContainer = async (env: Record<string, string>, args: ReadonlyArray<string> = []) => {
  const name = `hosting-test-${run}-${containers.length}`
  containers.push(name)
  const envArgs = Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`])
  await podmanOk([...runtime, "run", "--detach", "--name", name, "--network=host", ...limits, ...envArgs, images.server, ...args])
  return name
}

/** Runs a one-off command in a container of the image (removed afterwards, its volume too). */
const runOnce = (entrypoint: ReadonlyArray<string>, args: ReadonlyArray<string> = []) =>
  podman([
    ...runtime,
    "run",
    "--rm",
    "--network=host",
    ...limits,
    ...(entrypoint.length > 0 ? ["--entrypoint", JSON.stringify(entrypoint)] : []),
    images.server,
    ...args
  ])

/** Polls `/readyz` every 250 ms until it answers 200; fails with the last answer after `timeoutMs`. */
const waitReady = async (baseUrl: string, name: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  let last = "no answer"
  while (Date.now() < deadline) {
    const status = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, (e: Error) => e.message)
    if (status === 200) return
    last = String(status)
    await sleep(250)
  }
  const logs = await podman(["logs", name])
  throw new Error(`/readyz: still ${last} after ${timeoutMs} ms; the container's output:\n${logs.output}`)
}

beforeAll(async () => {
  if (unavailable !== undefined) return
  const store = await pnpmStore()
  execFileSync("bash", [baseTool, images.base], { stdio: "ignore", timeout: 120_000 })
  await importBuildImage()
  await podmanOk([
    ...runtime,
    "build",
    // The OCI format has no HEALTHCHECK.
    "--format",
    "docker",
    "--layers=false",
    "--network",
    "host",
    ...limits,
    "--build-arg",
    `BUILD_IMAGE=${images.build}`,
    "--build-arg",
    `BASE_IMAGE=${images.base}`,
    "--volume",
    "/usr:/usr:ro",
    ...(store === undefined ? [] : ["--volume", `${store}:/host-pnpm-store`, "--build-arg", "PNPM_STORE=/host-pnpm-store"]),
    "--file",
    join(repo, "Containerfile"),
    "--tag",
    images.server,
    repo
  ], 20 * 60_000)
}, 25 * 60_000)

afterAll(async () => {
  for (const name of containers) await podman(["rm", "--force", "--volumes", name]).catch(() => undefined)
  for (const image of Object.values(images)) await podman(["rmi", "--force", image]).catch(() => undefined)
  rmSync(dir, { recursive: true, force: true })
}, 120_000)

describe.skipIf(unavailable !== undefined)(`the container image${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`, () => {
  it("runs as user 1000 from the bundle and production dependencies only: no sources, dev dependencies, npm or compiler", async () => {
    const look = `
      const fs = require("node:fs")
      const has = (p) => fs.existsSync(p)
      console.log(JSON.stringify({
        uid: process.getuid(),
        app: fs.readdirSync("/app").sort(),
        packages: fs.readdirSync("/app/node_modules/.pnpm"),
        dataOwner: fs.statSync("/data").uid,
        tools: ["/usr/bin/gcc", "/usr/bin/g++", "/usr/bin/make", "/usr/local/bin/npm", "/usr/bin/npm"].filter(has)
      }))`
    const { code, output } = await runOnce(["/usr/local/bin/node", "-e", look])
    expect(code, output).toBe(0)
    const seen = JSON.parse(output.trim().split("\n").pop()!)
    expect(seen.uid).toBe(1000)
    expect(seen.dataOwner).toBe(1000)
    expect(seen.app).toEqual(["dashboard", "dist", "node_modules", "package.json"])
    expect(seen.tools).toEqual([])
    expect(seen.packages.some((p: string) => p.startsWith("better-sqlite3@"))).toBe(true)
    // The workspace's build and test tools (@types packages may stay: some clients list them as dependencies).
    const tools = ["typescript", "vitest", "tsup", "tsx", "esbuild", "vite", "@20minutes/s3rver", "@redocly/cli", "@changesets/cli", "playwright-core"]
    const dev = seen.packages.filter((p: string) => tools.some((tool) => p.startsWith(`${tool.replace("/", "+")}@`)))
    expect(dev).toEqual([])
  })

  it("`migrate` as the command migrates the SQLite database in /data and ends", async () => {
    const { code, output } = await runOnce([], ["migrate"])
    expect([code, output]).toEqual([0, expect.stringMatching(/^migrate: the schema is at migration \d+/m)])
  })

  it("serves: /readyz turns 200, setup makes the first user, the healthcheck passes; SIGTERM stops it cleanly", async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    // On the host's network the server must not listen beyond loopback; the image's default is 0.0.0.0.
    const name = await startContainer({ HOSTING_HOST: "127.0.0.1", HOSTING_PORT: String(port) })
    await waitReady(baseUrl, name)

    const code = /setup: {3}([A-Z0-9]{5}(?:-[A-Z0-9]{5}){3})/.exec((await podmanOk(["logs", name])))?.[1]
    expect(code).toBeDefined()
    const setup = await fetch(`${baseUrl}/api/v1/setup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code, user_id: "root", name: "Root" })
    })
    expect(setup.status).toBe(201)
    const { token } = await setup.json() as { token: string }
    const tokens = await fetch(`${baseUrl}/api/v1/tokens`, { headers: { authorization: `Bearer ${token}` } })
    expect(tokens.status).toBe(200)

    // The image's HEALTHCHECK, run by podman in the container (node, as there is no shell or curl).
    expect(await podman([...runtime, "healthcheck", "run", name])).toMatchObject({ code: 0 })

    const stopping = Date.now()
    await podmanOk(["kill", "--signal", "TERM", name])
    const exit = (await podmanOk(["wait", name], 30_000)).trim()
    const stoppedMs = Date.now() - stopping
    const logs = await podmanOk(["logs", name])
    expect(exit, logs).toBe("0")
    expect(stoppedMs, logs).toBeLessThan(15_000)
  })
})
