#!/usr/bin/env node
// The embedder's check (issue 25): what someone who installs our packages
// from npm gets. It expects `pnpm run build` done and builds nothing itself.
// It packs every published package, installs the tarballs with npm into a new
// project outside the workspace next to an effect other than the lockfile's
// (the floor of our peer range), type-checks and runs the server of the
// README's "Embedding the parts" section on 127.0.0.1, and asserts one copy of
// effect, no runtime version warning, and a chat reply streamed to its end.
// Exit code 0 when all holds; 1 with the reason otherwise.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const versionWarning = "Executing an Effect versioned"
const minute = 60_000
const started = Date.now()

/** One progress line. */
const say = (line) => console.log(`embedder-check [${((Date.now() - started) / 1000).toFixed(0)}s] ${line}`)

/** A failed assertion: its message is the reason printed at the end. */
class CheckFailed extends Error {}

const fail = (message) => {
  throw new CheckFailed(message)
}

/** Runs a command to its end within `timeout`; fails with its output when it does not succeed. */
const run = (command, args, { cwd, timeout = 5 * minute } = {}) => {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout, env: { ...process.env, npm_config_loglevel: "error" } })
  if (result.error || result.status !== 0) {
    const why = result.error ? String(result.error) : `exit code ${result.status}`
    fail(`${command} ${args.join(" ")} (in ${cwd}) failed: ${why}\n${result.stdout ?? ""}${result.stderr ?? ""}`)
  }
  return result.stdout
}

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"))

/** The packages an embedder can install: every package under packages/ that is not private. */
const publishedPackages = () =>
  readdirSync(join(root, "packages"))
    .map((dir) => ({ dir: join(root, "packages", dir), pkg: readJson(join(root, "packages", dir, "package.json")) }))
    .filter(({ pkg }) => pkg.private !== true)

/** The lowest version of a caret range (`^3.22.3` gives `3.22.3`). */
const floorOf = (range) => /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1] ?? fail(`peer range ${range} is not a caret range`)

/**
 * The versions installed beside the tarballs: for effect and each @effect/*
 * peer, the floor of its range (the highest floor when packages differ), so
 * that the range's lower end is what this check runs. Optional peers (the
 * test runner of @hosting/testing's suites) are left out. EMBEDDER_EFFECT
 * picks another effect.
 */
const peerVersions = (packages) => {
  const floors = {}
  for (const { pkg } of packages) {
    for (const [name, range] of Object.entries(pkg.peerDependencies ?? {})) {
      if (name !== "effect" && !name.startsWith("@effect/")) continue
      if (pkg.peerDependenciesMeta?.[name]?.optional) continue
      const floor = floorOf(range)
      if (floors[name] === undefined || compareVersions(floor, floors[name]) > 0) floors[name] = floor
    }
  }
  if (process.env["EMBEDDER_EFFECT"]) floors["effect"] = process.env["EMBEDDER_EFFECT"]
  return floors
}

const compareVersions = (a, b) => {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)]
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]
}

/** The effect version our own builds and tests use (the root's pin, which the lockfile resolves). */
const workspaceEffect = () => readJson(join(root, "package.json")).devDependencies.effect

/** The first TypeScript block of the README's embedding section: the code an embedder copies. */
const embeddingExample = () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const section = readme.split(/^## /m).find((part) => part.startsWith("Embedding the parts"))
  const code = section && /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  return code ?? fail('README.md has no "## Embedding the parts" section with a ```ts block')
}

/** Packs each package into `into`; returns the tarballs by package name. */
const pack = (packages, into) => {
  const tarballs = {}
  for (const { dir, pkg } of packages) {
    if (!existsSync(join(dir, "dist", "index.js"))) fail(`${pkg.name} is not built (no dist/index.js): run npx -y pnpm@10 run build first`)
    const before = new Set(readdirSync(into))
    run("npx", ["-y", "pnpm@10", "pack", "--pack-destination", into], { cwd: dir, timeout: 2 * minute })
    const made = readdirSync(into).find((file) => !before.has(file) && file.endsWith(".tgz"))
    tarballs[pkg.name] = join(into, made ?? fail(`pnpm pack made no tarball for ${pkg.name}`))
  }
  return tarballs
}

/**
 * Writes the embedder's project: the tarballs as file: dependencies (also as
 * overrides, so none comes from the registry), and a strict tsconfig that
 * checks every declaration file, ours included (no skipLibCheck).
 */
const writeProject = (project, tarballs, peers) => {
  const files = Object.fromEntries(Object.entries(tarballs).map(([name, path]) => [name, `file:${path}`]))
  writeFileSync(join(project, "package.json"), JSON.stringify({
    name: "embedder",
    private: true,
    type: "module",
    dependencies: { ...files, ...peers },
    // @types/ws: @effect/platform-node's declarations import "ws", whose types
    // come apart; without it, a check of every .d.ts (our own too) fails there.
    devDependencies: { "@types/node": "^20.19.0", "@types/ws": "^8.5.0", typescript: "~5.9.0" },
    overrides: files
  }, null, 2))
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      types: ["node"],
      outDir: "dist",
      rootDir: "src"
    },
    include: ["src"]
  }, null, 2))
  mkdirSync(join(project, "src"))
  writeFileSync(join(project, "src", "server.ts"), embeddingExample())
}

/** Every installed copy of effect (`npm ls --parseable` gives one path per copy), with its version. */
const effectCopies = (project) =>
  run("npm", ["ls", "effect", "--all", "--parseable"], { cwd: project, timeout: minute })
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((path) => ({ path, version: readJson(join(path, "package.json")).version }))

/** A free port of 127.0.0.1. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })

/** Starts the compiled server; its whole output is kept for the version warning check. */
const startServer = (project, port) => {
  const child = spawn(process.execPath, ["dist/server.js"], { cwd: project, env: { ...process.env, PORT: String(port) } })
  const server = { child, output: "", exited: false }
  child.stdout.on("data", (chunk) => (server.output += chunk))
  child.stderr.on("data", (chunk) => (server.output += chunk))
  child.on("exit", () => (server.exited = true))
  return server
}

/** Stops the server: SIGTERM, then SIGKILL if it has not ended within ten seconds. */
const stopServer = async (server) => {
  if (server.exited) return
  const ended = new Promise((resolve) => server.child.once("exit", resolve))
  server.child.kill("SIGTERM")
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 10_000)
  await ended
  clearTimeout(timer)
}

/** Waits until /readyz answers 200, within `timeout`. */
const waitReady = async (server, base, timeout = 30_000) => {
  const deadline = Date.now() + timeout
  while (Date.now() < deadline) {
    if (server.exited) fail(`the server ended before it was ready:\n${server.output}`)
    const status = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  fail(`the server was not ready within ${timeout / 1000} s:\n${server.output}`)
}

/** One JSON call of the API with alice's token; fails unless the status is `expected`. */
const call = async (api, method, path, body, expected) => {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: "Bearer alice-token", "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  if (response.status !== expected) fail(`${method} ${path} answered ${response.status} (expected ${expected}): ${text}`)
  return JSON.parse(text)
}

/** Reads a reply stream until `message.completed`, within `timeout`; resolves with its data. */
const readReply = async (url, timeout = 15_000) => {
  const response = await fetch(url, { headers: { authorization: "Bearer alice-token" }, signal: AbortSignal.timeout(timeout) })
  if (response.status !== 200) fail(`GET ${url} answered ${response.status}: ${await response.text()}`)
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  let buffer = ""
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) fail(`the reply stream ended before message.completed: ${buffer}`)
      buffer += decoder.decode(value, { stream: true })
      const completed = completedIn(buffer)
      if (completed) return completed
    }
  } catch (error) {
    if (error instanceof CheckFailed) throw error
    fail(`no message.completed on the reply stream within ${timeout / 1000} s (${error}): ${buffer}`)
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

/** The data of the first complete `message.completed` frame in SSE text, if any. */
const completedIn = (text) => {
  for (const frame of text.split(/\r?\n\r?\n/).slice(0, -1)) {
    const lines = frame.split(/\r?\n/)
    if (!lines.includes("event: message.completed")) continue
    const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n")
    return JSON.parse(data)
  }
  return undefined
}

/** The contract an embedder needs: register a build, deploy it, send a message, read the reply to its end. */
const chat = async (api) => {
  const text = "hello from an embedder"
  await call(api, "POST", "/agents/acme/helper/register", { build_id: "b-1", registry: "ghcr.io/acme", spec_content: "name: helper\n" }, 201)
  say("registered build b-1 of acme/helper")
  const deployment = await call(api, "POST", "/agents/acme/helper/deployments", { build_id: "b-1" }, 201)
  say(`deployed it: ${deployment.id}`)
  const conversation = globalThis.crypto.randomUUID()
  const thread = `/deployments/${deployment.id}/messaging/conversations/${conversation}`
  const sent = await call(api, "POST", `${thread}/messages`, { content: text, attachments: [] }, 200)
  say(`sent message ${sent.message_id}`)
  const completed = await readReply(`${api}${thread}/stream`)
  if (completed.content !== text) fail(`the echo agent's reply is ${JSON.stringify(completed.content)}, not ${JSON.stringify(text)}`)
  say(`reply stream reached message.completed: ${JSON.stringify(completed.content)}`)
}

/** Serves the compiled example and checks it; the server is always stopped. */
const serveAndCheck = async (project) => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  say(`starting the server on ${base}`)
  const server = startServer(project, port)
  try {
    await waitReady(server, base)
    say("ready (/readyz 200)")
    await chat(`${base}/api/v1`)
  } finally {
    await stopServer(server)
    say("server stopped")
  }
  if (server.output.includes(versionWarning)) {
    fail(`the server logged "${versionWarning}": more than one effect is loaded\n${server.output}`)
  }
  say(`no "${versionWarning}" warning in the server's output`)
}

const check = async (work) => {
  const packages = publishedPackages()
  const peers = peerVersions(packages)
  const ours = workspaceEffect()
  if (peers["effect"] === ours) fail(`effect ${ours} is the lockfile's own; set EMBEDDER_EFFECT to another version inside the peer range`)
  say(`workspace effect ${ours}; the embedder installs ${Object.entries(peers).map(([n, v]) => `${n}@${v}`).join(" ")}`)

  const tarballs = join(work, "tarballs")
  const project = join(work, "project")
  mkdirSync(tarballs)
  mkdirSync(project)
  say(`packing ${packages.length} packages into ${tarballs}`)
  writeProject(project, pack(packages, tarballs), peers)

  say(`npm install in ${project} (better-sqlite3 may compile: up to 10 minutes)`)
  run("npm", ["install", "--no-audit", "--no-fund"], { cwd: project, timeout: 10 * minute })

  const copies = effectCopies(project)
  say(`npm ls effect --all: ${copies.length} cop${copies.length === 1 ? "y" : "ies"} (${copies.map((c) => c.version).join(", ")})`)
  if (copies.length !== 1) fail(`expected one copy of effect, found ${copies.length}:\n${copies.map((c) => `  ${c.version} ${c.path}`).join("\n")}`)
  if (copies[0].version !== peers["effect"]) fail(`the one effect is ${copies[0].version}, not the ${peers["effect"]} the embedder asked for`)

  say("tsc: type-checking and compiling the README's embedding example")
  run("npx", ["tsc", "-p", "tsconfig.json"], { cwd: project, timeout: 3 * minute })

  await serveAndCheck(project)
}

const main = async () => {
  const work = mkdtempSync(join(tmpdir(), "hosting-embedder-"))
  const cleanUp = () => rmSync(work, { recursive: true, force: true })
  process.once("SIGINT", () => {
    cleanUp()
    process.exit(130)
  })
  try {
    await check(work)
    say(`passed in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  } catch (error) {
    console.error(`embedder-check FAILED: ${error instanceof CheckFailed ? error.message : error?.stack ?? error}`)
    process.exitCode = 1
  } finally {
    cleanUp()
  }
}

await main()
