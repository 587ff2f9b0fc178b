#!/usr/bin/env node
// Starts the example server, building the workspace packages it uses first
// when any source file is newer than its build.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const dirs = [...readdirSync(join(root, "packages")).map((d) => join(root, "packages", d)), join(root, "examples", "server")]

const newest = (dir) => {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

const stale = dirs.some((dir) => {
  const src = join(dir, "src")
  const built = join(dir, "dist", "index.js")
  if (!existsSync(src)) return false
  return !existsSync(built) || newest(src) > statSync(built).mtimeMs
})

if (stale) {
  console.error("building the server and its packages (first start or changed sources)...")
  const pnpm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ["npx", ["-y", "pnpm@10"]]
  const result = spawnSync(pnpm[0], [...pnpm[1], "-r", "--filter", "@hosting/example-server...", "build"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"]
  })
  if (result.status !== 0) {
    console.error("build failed")
    process.exit(result.status ?? 1)
  }
}

const server = spawn(process.execPath, [join(root, "examples", "server", "dist", "main.js")], { stdio: "inherit" })
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal))
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
