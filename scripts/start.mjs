#!/usr/bin/env node
// Starts the example server, first building what it runs and serves (the
// server, the workspace packages it uses, the dashboard) when any of them
// has sources newer than its build, or no build at all.
import { spawn } from "node:child_process"
import { join, relative } from "node:path"
import { createInterface } from "node:readline"
import { isStale, root, startPlan } from "./sources.mjs"

/**
 * Runs pnpm's build of `filters`, printing a line on stderr as each package
 * starts (stdout carries only the server's own lines); the whole output when
 * it fails. Resolves with the exit code.
 */
const build = (filters) =>
  new Promise((resolve) => {
    const pnpm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ["npx", ["-y", "pnpm@10"]]
    const child = spawn(pnpm[0], [...pnpm[1], "-r", ...filters, "--reporter=append-only", "build"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const output = []
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        output.push(line)
        const started = /^(\S+) build\$ /.exec(line)
        if (started) console.error(`  building ${started[1]}`)
      })
    }
    child.on("error", (error) => {
      output.push(String(error))
      resolve(1)
    })
    child.on("close", (code) => {
      if (code !== 0) console.error(output.join("\n"))
      resolve(code ?? 1)
    })
  })

// Only what is stale is built again: a package's build bundles its own
// sources alone, and reads the others' types from their builds.
const stale = startPlan().dirs.filter((dir) => isStale(dir)).map((dir) => relative(root, dir))
if (stale.length > 0) {
  console.error(`building what the server runs and serves (first start, or changed sources): ${stale.join(", ")}`)
  const code = await build(stale.flatMap((dir) => ["--filter", `./${dir}`]))
  if (code !== 0) {
    console.error("build failed")
    process.exit(code)
  }
}

const server = spawn(process.execPath, [join(root, "examples", "server", "dist", "main.js")], { stdio: "inherit" })
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal))
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
