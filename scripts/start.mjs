#!/usr/bin/env node
// Starts the example server, first building what it runs and serves (the
// server, the workspace packages it uses, the dashboard) when any of them
// has sources newer than its build, or no build at all.
import { spawn, spawnSync } from "node:child_process"
import { join, relative } from "node:path"
import { isStale, root, startPlan } from "./sources.mjs"

const plan = startPlan()
const stale = plan.dirs.filter((dir) => isStale(dir))

if (stale.length > 0) {
  console.error(
    `building the server, its packages and the dashboard (first start, or changed: ${stale.map((dir) => relative(root, dir)).join(", ")})...`
  )
  const pnpm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ["npx", ["-y", "pnpm@10"]]
  // The build's progress goes to stderr, so that stdout carries only the server's own lines.
  const result = spawnSync(pnpm[0], [...pnpm[1], "-r", ...plan.filters, "--reporter=append-only", "build"], {
    cwd: root,
    stdio: ["ignore", 2, "inherit"]
  })
  if (result.status !== 0) {
    console.error("build failed")
    process.exit(result.status ?? 1)
  }
}

const server = spawn(process.execPath, [join(root, "examples", "server", "dist", "main.js")], { stdio: "inherit" })
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal))
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
