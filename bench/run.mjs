#!/usr/bin/env node
// The benchmark runner: `node bench/run.mjs [--smoke] [workload ...]`.
// Starts the example server and the baselines as separate processes pinned
// to other CPUs than the load generators, warms up, interleaves rounds and
// prints, per workload, the medians, the ratio to the baseline measured in
// the same run, and each goal with its measured value. Goals are reported,
// never asserted: the exit code is 1 only when the harness itself failed.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { forgetServers, pinCpus, stopAll } from "./lib/proc.mjs"
import { buildIsStale, distMain, root } from "./lib/targets.mjs"
import { table, withTimeout } from "./lib/util.mjs"
import agentGet from "./workloads/agent-get.mjs"
import cliStart from "./workloads/cli-start.mjs"
import download from "./workloads/download.mjs"
import events from "./workloads/events.mjs"
import flow from "./workloads/flow.mjs"
import reads from "./workloads/reads.mjs"
import replies from "./workloads/replies.mjs"
import send from "./workloads/send.mjs"
import start from "./workloads/start.mjs"

const workloads = [agentGet, send, reads, flow, events, replies, start, download, cliStart]

/** Full runs measure the goals; smoke runs only prove the harness works (seconds per workload). */
const scales = {
  full: {
    agents: 1000, connections: 50, warmupS: 3, durationS: 10, httpRounds: 5, verifyS: 60,
    subscribers: 10_000, eventRounds: 3, eventsPerRound: 5, churnCycles: 5,
    conversations: 1000, chunks: 50, intervalMs: 100, replyRounds: 3,
    startRounds: 5, cliStartRounds: 10, fileMB: 200, downloadRounds: 3, downloadMBs: 100,
    readConversations: 20, readDeployments: 10, readRounds: 3, readS: 10,
    flowClients: 10, flowClientsHigh: 50, flowRounds: 3, flowS: 10, flowWarmupS: 10, flowWorkers: 1, flowDatabase: "sqlite", flowPart: "whole", flowAgainst: "turns", flowAgent: "echo",
    sseWorkers: 4, workloadS: 1800
  },
  smoke: {
    agents: 100, connections: 50, warmupS: 1, durationS: 2, httpRounds: 2, verifyS: 20,
    subscribers: 200, eventRounds: 2, eventsPerRound: 2, churnCycles: 2,
    conversations: 50, chunks: 10, intervalMs: 100, replyRounds: 2,
    startRounds: 2, cliStartRounds: 2, fileMB: 20, downloadRounds: 2, downloadMBs: 50,
    readConversations: 5, readDeployments: 3, readRounds: 1, readS: 0.5,
    flowClients: 10, flowClientsHigh: 50, flowRounds: 1, flowS: 1, flowWarmupS: 1, flowWorkers: 1, flowDatabase: "sqlite", flowPart: "whole", flowAgainst: "turns", flowAgent: "echo",
    sseWorkers: 2, workloadS: 300
  }
}

/** The keys of the scale that take one of these words instead of a positive number. */
const choices = { flowDatabase: ["sqlite", "postgres"], flowPart: ["whole", "send", "stream"], flowAgainst: ["turns", "together"], flowAgent: ["echo", "http"] }

const usage = `usage: node bench/run.mjs [options] [workload ...]   (pnpm bench [options] [workload ...])

workloads: ${workloads.map((w) => w.name).join(", ")} (default: all)

options:
  --smoke          scaled-down counts and seconds-long rounds: checks the harness, measures nothing
  --source         run the example server from its TypeScript sources through tsx (no build needed;
                   start time and RSS then include the compiler)
  --build          build the example server and its packages first (pnpm -r build)
  --rounds <n>     measured rounds per target (default: full 5 HTTP / 3 streams, smoke 2)
  --duration <s>   seconds per autocannon or flow round (default: full 10, smoke 2; reads and flow smoke: 0.5 / 1)
  --set <k>=<v>    override one count of the scale, e.g. --set subscribers=2000 (repeatable;
                   the keys are listed by --list); --set flowDatabase=postgres runs the flow
                   workload's example server on a fresh database of HOSTING_BENCH_POSTGRES
                   (default postgres://postgres@127.0.0.1:5432), dropped after the run;
                   --set flowPart=send (or stream) measures that half of the flow alone;
                   --set flowAgainst=together loads the flow's --against build at the same time as this one;
                   --set flowAgent=http puts the bench agent behind the http agent runtime (bare relays it)
  --time-limit <s> stop a workload (and every process it started) after this many seconds
                   (default: full 1800, smoke 300)
  --cpus <s>/<l>   taskset CPU lists for servers / load generators (default: halves of the allowed CPUs)
  --json <file>    also write every measurement as JSON
  --against <main.js>
                   send, reads, flow, replies: also measure another build of the example server (its dist/main.js, e.g.
                   from a git worktree of an older commit), loaded in turn with this one as target "against"
  --routes <a,b>   reads: measure only these routes (history, conversations, agent, me, deployments)
  --keep           keep the temporary directories (databases, fixtures, the download's file)
  --list           list the workloads and exit
  -h, --help       this text`

const { values: options, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        smoke: { type: "boolean" },
        source: { type: "boolean" },
        build: { type: "boolean" },
        rounds: { type: "string" },
        duration: { type: "string" },
        "time-limit": { type: "string" },
        set: { type: "string", multiple: true },
        cpus: { type: "string" },
        json: { type: "string" },
        against: { type: "string" },
        routes: { type: "string" },
        keep: { type: "boolean" },
        list: { type: "boolean" },
        help: { type: "boolean", short: "h" }
      }
    })
  } catch (error) {
    console.error(`${error.message}\n\n${usage}`)
    process.exit(2)
  }
})()

if (options.help) {
  console.log(usage)
  process.exit(0)
}
if (options.list) {
  for (const w of workloads) console.log(`${w.name.padEnd(10)} ${w.title}`)
  console.log("\nscale (full / smoke), for --set:")
  const width = Math.max(...Object.keys(scales.full).map((key) => key.length))
  for (const key of Object.keys(scales.full)) console.log(`  ${key.padEnd(width)}  ${scales.full[key]} / ${scales.smoke[key]}`)
  process.exit(0)
}

const unknown = positionals.filter((name) => !workloads.some((w) => w.name === name))
if (unknown.length > 0) {
  console.error(`unknown workload ${unknown.join(", ")}; one of: ${workloads.map((w) => w.name).join(", ")}`)
  process.exit(2)
}
const selected = positionals.length === 0 ? workloads : workloads.filter((w) => positionals.includes(w.name))

const refuse = (message) => {
  console.error(`bench: ${message}`)
  process.exit(2)
}

const scale = { ...scales[options.smoke ? "smoke" : "full"] }
if (options.rounds) {
  const rounds = Number(options.rounds)
  if (!Number.isInteger(rounds) || rounds < 1) refuse("--rounds must be a whole number >= 1")
  Object.assign(scale, {
    httpRounds: rounds, readRounds: rounds, flowRounds: rounds, eventRounds: rounds, replyRounds: rounds,
    startRounds: rounds, cliStartRounds: rounds, downloadRounds: rounds
  })
}
if (options.duration) {
  const seconds = Number(options.duration)
  if (!(seconds >= 1)) refuse("--duration must be at least 1 second")
  Object.assign(scale, { durationS: seconds, readS: seconds, flowS: seconds })
}
for (const assignment of options.set ?? []) {
  const [key, value] = assignment.split("=")
  if (key in choices) {
    if (!choices[key].includes(value)) refuse(`--set ${assignment}: ${key} is one of ${choices[key].join(", ")}`)
    scale[key] = value
    continue
  }
  if (!(key in scale) || !(Number(value) > 0)) {
    refuse(`--set ${assignment}: expected <key>=<positive number>, key one of ${Object.keys(scale).join(", ")}`)
  }
  scale[key] = Number(value)
}
if (options["time-limit"]) {
  const seconds = Number(options["time-limit"])
  if (!(seconds >= 1)) refuse("--time-limit must be at least 1 second")
  scale.workloadS = seconds
}

// The load generators' dependencies resolve from bench/node_modules once
// `bench` is a workspace package and `pnpm install` ran.
const require = createRequire(import.meta.url)
const missing = [...new Set(selected.flatMap((w) => w.needs))].filter((name) => {
  try {
    require.resolve(name)
    return false
  } catch {
    return true
  }
})
if (missing.length > 0) {
  console.error(`bench: ${missing.join(", ")} not installed: run \`npx -y pnpm@10 install\` ` +
    `(bench/ must be listed in pnpm-workspace.yaml)`)
  process.exit(1)
}

// Which example server: its build (the default), or the sources through tsx.
const mode = options.source ? "source" : "dist"
if (options.build && !options.source) {
  console.error("bench: building the example server and its packages...")
  const result = spawnSync("npx", ["-y", "pnpm@10", "-r", "--filter", "@hosting/example-server...", "build"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 10 * 60_000
  })
  if (result.status !== 0) {
    console.error("bench: the build failed")
    process.exit(1)
  }
}
if (mode === "dist" && !existsSync(distMain)) {
  console.error("bench: examples/server/dist/main.js is missing. Run `npx -y pnpm@10 run build` first, " +
    "or pass --build (builds it) or --source (runs the TypeScript sources through tsx).")
  process.exit(1)
}
const stale = mode === "dist" && buildIsStale()
const against = options.against === undefined ? undefined : resolve(options.against)
if (against !== undefined && !existsSync(against)) refuse(`--against ${options.against}: no such file`)

const cpuModel = (() => {
  try {
    return /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? os.cpus()[0]?.model
  } catch {
    return os.cpus()[0]?.model
  }
})()
const fdLimit = Number(spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).stdout.trim())
const machine = {
  nproc: os.availableParallelism(),
  cpu: cpuModel,
  memoryGB: Math.round(os.totalmem() / 1024 ** 3),
  node: process.version,
  fdLimit
}
// After reading the CPU count: pinning narrows this process to the load CPUs.
const cpus = pinCpus(options.cpus)

console.log(`bench: ${options.smoke ? "SMOKE run (scaled down: checks the harness; numbers are not goal measurements)" : "full run"}`)
console.log(`machine: ${machine.nproc} CPUs (${machine.cpu}), ${machine.memoryGB} GB, node ${machine.node}, ulimit -n ${fdLimit}`)
console.log(`pinning: ${cpus.note}`)
console.log(`example server: ${mode === "source" ? "TypeScript sources through tsx (not a build)" : "examples/server/dist/main.js"}` +
  (stale ? "  WARNING: the build is older than the sources; run `npx -y pnpm@10 run build`" : ""))
if (selected.some((w) => w.name === "events") && fdLimit < scale.subscribers + 1000) {
  console.log(`WARNING: ulimit -n is ${fdLimit}; ${scale.subscribers} subscribers need more (raise it with \`ulimit -n 65536\`)`)
}

let stopping = false
let currentTmp
/** What the running workload asked to undo once its processes are stopped (a Postgres database). */
let cleanups = []
const runCleanups = async () => {
  for (const undo of cleanups.splice(0).reverse()) {
    try {
      await undo()
    } catch (error) {
      console.log(`  cleanup failed: ${error.message}`)
    }
  }
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    console.error(`\nbench: ${signal}: stopping every process it started`)
    stopAll(2_000).then(runCleanups).finally(() => {
      if (currentTmp && !options.keep) rmSync(currentTmp, { recursive: true, force: true })
      process.exit(130)
    })
  })
}
// After a workload's time limit its pending steps fail as their processes stop; that is expected.
process.on("unhandledRejection", (error) => {
  if (!stopping) console.error(`bench: late failure: ${error?.message ?? error}`)
})

const marker = (ok) => (ok === null ? "n/a " : ok ? "ok  " : "MISS")
const results = []
let failed = 0

for (const workload of selected) {
  const tmp = mkdtempSync(join(os.tmpdir(), `hosting-bench-${workload.name}-`))
  currentTmp = tmp
  const started = Date.now()
  const ctx = {
    scope: { closed: false },
    scale,
    smoke: Boolean(options.smoke),
    mode,
    cpus,
    against,
    routes: options.routes?.split(",").map((name) => name.trim()).filter((name) => name !== ""),
    dir: () => tmp,
    // Runs after the workload's processes are stopped, whether it ended, failed or ran out of time.
    cleanup: (undo) => void cleanups.push(undo),
    // A workload that ran out of time may still be unwinding: it stays quiet.
    log: (line) => ctx.scope.closed || console.log(`  . ${line}`)
  }
  console.log(`\n== ${workload.name}: ${workload.title}`)
  try {
    const report = await withTimeout(workload.run(ctx), scale.workloadS * 1000, workload.name)
    console.log(`  ${report.detail}`)
    console.log(table(report.columns, report.rows))
    for (const g of report.goals) {
      console.log(`  ${marker(g.ok)} ${g.label}: ${g.measured} (goal ${g.target})${options.smoke ? " [smoke]" : ""}`)
    }
    for (const note of report.notes ?? []) console.log(`  note: ${note}`)
    results.push({ workload: workload.name, seconds: (Date.now() - started) / 1000, ...report })
  } catch (error) {
    failed++
    console.log(`  FAILED: ${error.stack ?? error.message}`)
    for (const server of forgetServers()) console.log(`  ${server}`)
    results.push({ workload: workload.name, error: error.message })
  } finally {
    ctx.scope.closed = true
    await stopAll()
    await runCleanups()
    forgetServers()
    if (!options.keep) rmSync(tmp, { recursive: true, force: true })
    else console.log(`  kept ${tmp}`)
    console.log(`  (${Math.round((Date.now() - started) / 1000)} s)`)
  }
}

if (options.json) {
  writeFileSync(options.json, JSON.stringify({ smoke: Boolean(options.smoke), mode, machine, cpus, scale, results }, null, 2))
  console.log(`\nwrote ${options.json}`)
}
console.log(failed === 0 ? "\nbench: done" : `\nbench: ${failed} workload(s) failed`)
process.exit(failed === 0 ? 0 : 1)
