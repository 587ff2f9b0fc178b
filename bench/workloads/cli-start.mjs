// CLI start: the time from spawning `node` to the exit of `hosting --version`,
// `hosting --help` and a subcommand's help (the built CLI, output to a pipe), beside a bare
// `node -e 0` start, the floor every ratio divides by. A first run per
// command warms the page cache and is not counted.
import { spawn } from "node:child_process"
import { join } from "node:path"
import { root } from "../lib/targets.mjs"
import { fmt, goal, median, ratio } from "../lib/util.mjs"

const bin = join(root, "packages/cli/bin/hosting.mjs")

/** Milliseconds from spawn to exit of `node <args>`; fails on a non-zero exit. */
const timed = (args) =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } })
    child.stdout.resume()
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    child.on("exit", (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`node ${args.join(" ")}: exit ${code}\n${stderr}`))))
  })

export default {
  name: "cli-start",
  title: "CLI start: hosting --version and --help against a bare node start",
  needs: [],
  async run(ctx) {
    const { scale } = ctx
    const targets = [
      { name: "node -e 0", args: ["-e", "0"] },
      { name: "hosting --version", args: [bin, "--version"] },
      { name: "hosting --help", args: [bin, "--help"] },
      { name: "hosting chat send --help", args: [bin, "chat", "send", "--help"] }
    ]
    for (const target of targets) await timed(target.args)
    const rounds = Object.fromEntries(targets.map((t) => [t.name, []]))
    for (let r = 1; r <= scale.cliStartRounds; r++) {
      for (const target of targets) {
        const ms = await timed(target.args)
        rounds[target.name].push(ms)
        ctx.log(`round ${r} ${target.name}: ${fmt(ms)} ms`)
      }
    }
    const ms = Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, median(list)]))
    const floor = ms["node -e 0"]
    const judged = ctx.mode === "source" ? null : true
    return {
      detail: `${scale.cliStartRounds} runs per command, spawn to exit, the built CLI (packages/cli/dist)`,
      columns: ["command", "median ms", "max ms", "vs node -e 0"],
      rows: targets.map(({ name }) => [name, fmt(ms[name]), fmt(Math.max(...rounds[name])), ratio(ms[name], floor)]),
      goals: [
        goal("hosting --version", `${fmt(ms["hosting --version"])} ms`, "<= 250 ms", judged && ms["hosting --version"] <= 250),
        goal("hosting --help", `${fmt(ms["hosting --help"])} ms`, "<= 250 ms", judged && ms["hosting --help"] <= 250),
        goal("hosting chat send --help", `${fmt(ms["hosting chat send --help"])} ms`, "<= 250 ms", judged && ms["hosting chat send --help"] <= 250)
      ],
      notes: ["the CLI always runs from its build (packages/cli/dist): run `pnpm run build` (or --build) first"],
      raw: rounds
    }
  }
}
