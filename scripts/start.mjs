#!/usr/bin/env node
// Starts the example server, building the workspace packages it uses first
// when any source file is newer than its build.
import { spawn, spawnSync } from "node:child_process"
import { join } from "node:path"
import { isStale, root, serverDirs } from "./sources.mjs"

const stale = serverDirs().some((dir) => isStale(dir))

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
