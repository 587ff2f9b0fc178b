// Processes: CPU pinning, servers that print a listening line, load workers
// over IPC, /proc readings, and the cleanup that stops every child the runner
// started, whatever happens.
import { fork, spawn, spawnSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { now, sleep } from "./util.mjs"

/** Every child process still running; killed on exit, on signals and by `stopAll`. */
const children = new Set()

const killNow = () => {
  for (const child of children) {
    try {
      child.kill("SIGKILL")
    } catch {}
  }
}
process.on("exit", killNow)

/** Stops every child (SIGTERM, then SIGKILL after `graceMs`). */
export const stopAll = async (graceMs = 5_000) => {
  await Promise.all([...children].map((child) => stopChild(child, graceMs)))
}

const stopChild = (child, graceMs) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child)
      return resolve(child.exitCode)
    }
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs)
    child.once("exit", (code) => {
      clearTimeout(kill)
      children.delete(child)
      resolve(code)
    })
    child.kill("SIGTERM")
  })

/** The servers started since the last `forgetServers()`, for a failure report. */
let servers = []

/** Name, state and last output lines of each server started since the last call, then forgets them. */
export const forgetServers = (lines = 15) => {
  const report = servers.map(({ name, pid, child, output }) => {
    const state = child.exitCode !== null || child.signalCode !== null
      ? `exited (${child.exitCode ?? child.signalCode})`
      : "running"
    return `${name} (pid ${pid}, ${state}):\n${output().trimEnd().split("\n").slice(-lines).map((l) => `    ${l}`).join("\n")}`
  })
  servers = []
  return report
}

const track = (child) => {
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}

/** The CPUs this process may run on, from `taskset -pc`; null when taskset is missing. */
const allowedCpus = () => {
  const result = spawnSync("taskset", ["-pc", String(process.pid)], { encoding: "utf8" })
  if (result.error || result.status !== 0) return null
  const list = /:\s*([\d,\s-]+)\s*$/.exec(result.stdout)?.[1]
  if (!list) return null
  const cpus = []
  for (const part of list.split(",")) {
    const [from, to] = part.trim().split("-").map(Number)
    for (let cpu = from; cpu <= (to ?? from); cpu++) cpus.push(cpu)
  }
  return cpus
}

/**
 * Splits the allowed CPUs between the servers (the first half) and the load
 * generators (the rest), pins this process and so every load child to the
 * load half, and returns the plan. Without taskset or with one CPU nothing is
 * pinned. `override` is "<server cpus>/<load cpus>" in taskset's list syntax.
 */
export const pinCpus = (override) => {
  const cpus = allowedCpus()
  if (!cpus) return { server: null, load: null, note: "taskset not found: processes are not pinned" }
  let server, load
  if (override) {
    ;[server, load] = override.split("/")
  } else {
    if (cpus.length < 2) return { server: null, load: null, note: "one CPU: processes are not pinned" }
    const half = Math.floor(cpus.length / 2)
    server = cpus.slice(0, half).join(",")
    load = cpus.slice(half).join(",")
  }
  // -a: every thread of this process (libuv and V8 threads already exist); children inherit it.
  const pinned = spawnSync("taskset", ["-a", "-pc", load, String(process.pid)], { encoding: "utf8" })
  if (pinned.status !== 0) return { server: null, load: null, note: `taskset failed: ${pinned.stderr.trim()}` }
  return { server, load, note: `servers on CPU ${server}, load generators on CPU ${load}` }
}

/** Resident set size of a process in bytes (VmRSS), NaN once it is gone. */
export const rss = (pid) => {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kb ? Number(kb) * 1024 : NaN
  } catch {
    return NaN
  }
}

/**
 * CPU time a process has used (user + system), in microseconds, NaN once it
 * is gone. /proc counts it in clock ticks of 10 ms (Linux's USER_HZ), so read
 * it over seconds, not single requests.
 */
export const cpuMicros = (pid) => {
  try {
    // The fields after the command name, which may itself hold spaces: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return NaN
  }
}

/** Open file descriptors of a process (sockets included), NaN once it is gone. */
export const fdCount = (pid) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length
  } catch {
    return NaN
  }
}

/** Samples the RSS of `pid` every `everyMs` until `stop()`, which returns { max, last, samples }. */
export const sampleRss = (pid, everyMs = 100) => {
  const samples = [rss(pid)]
  const timer = setInterval(() => samples.push(rss(pid)), everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      samples.push(rss(pid))
      const finite = samples.filter(Number.isFinite)
      return { max: Math.max(...finite), last: finite.at(-1), samples: finite }
    }
  }
}

/**
 * Refuses to start anything for a workload whose `scope` was closed (its time
 * ran out and its processes were stopped), so a late step cannot leave a
 * process behind.
 */
const checkScope = (scope, name) => {
  if (scope?.closed) throw new Error(`${name}: not started, the workload was stopped`)
}

/**
 * Starts a server process (pinned to `cpus` when given) and resolves once its
 * output matches `ready` (whose first group is the base URL). Rejects, after
 * killing it, when it exits first or takes longer than `timeoutMs`.
 */
export const startServer = ({ name, args, env, cwd, cpus, scope, ready = /listening on (http:\/\/\S+)/, timeoutMs = 60_000 }) =>
  new Promise((resolve, reject) => {
    checkScope(scope, name)
    const [command, argv] = cpus ? ["taskset", ["-c", cpus, process.execPath, ...args]] : [process.execPath, args]
    const spawnedAt = now()
    const child = track(spawn(command, argv, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] }))
    let output = ""
    // Keep the tail only: a busy server may log a lot.
    const keep = (data) => {
      output = (output + data).slice(-64 * 1024)
    }
    let settled = false
    const fail = (message) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(new Error(`${name}: ${message}\n--- output ---\n${output.slice(-4000)}`))
    }
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs / 1000} s`), timeoutMs)
    child.on("error", (error) => fail(`cannot start: ${error.message}`))
    const onEarlyExit = (code, signal) => fail(`exited (${code ?? signal}) before it was ready`)
    child.once("exit", onEarlyExit)
    child.stderr.on("data", keep)
    child.stdout.on("data", (data) => {
      keep(data)
      const match = settled ? null : ready.exec(output)
      if (!match) return
      settled = true
      clearTimeout(timer)
      const readyAt = now()
      child.off("exit", onEarlyExit)
      servers.push({ name, pid: child.pid, child, output: () => output })
      resolve({
        name,
        pid: child.pid,
        url: match[1],
        startMs: readyAt - spawnedAt,
        output: () => output,
        alive: () => child.exitCode === null && child.signalCode === null,
        stop: (graceMs = 5_000) => stopChild(child, graceMs)
      })
    })
  })

/**
 * Forks `count` load workers running `module` and returns a handle to call
 * them: `all(message, timeoutMs)` sends to each (with `part(i)` merged in)
 * and resolves with their answers.
 */
export const startWorkers = async (module, count, scope) => {
  checkScope(scope, module)
  const workers = Array.from({ length: count }, () =>
    track(fork(module, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" }))
      // A send to a worker that just exited is answered through `call`'s callback; not a crash.
      .on("error", () => {})
  )
  let nextId = 0
  const call = (worker, message, timeoutMs) =>
    new Promise((resolve, reject) => {
      const id = ++nextId
      const onMessage = (answer) => {
        if (answer?.id !== id) return
        done()
        answer.error ? reject(new Error(`load worker: ${answer.error}`)) : resolve(answer)
      }
      const onExit = (code) => {
        done()
        reject(new Error(`load worker exited (${code}) during ${message.cmd}`))
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`load worker: ${message.cmd} took longer than ${Math.round(timeoutMs / 1000)} s`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        worker.off("message", onMessage)
        worker.off("exit", onExit)
      }
      if (!worker.connected) {
        done()
        return reject(new Error(`load worker is gone (${message.cmd})`))
      }
      worker.on("message", onMessage)
      worker.once("exit", onExit)
      worker.send({ ...message, id }, (error) => {
        if (error) {
          done()
          reject(new Error(`load worker: cannot send ${message.cmd}: ${error.message}`))
        }
      })
    })
  // Wait until each worker has loaded its module and answers.
  await Promise.all(workers.map((worker) => call(worker, { cmd: "ping" }, 30_000)))
  return {
    count,
    all: (message, timeoutMs, part = () => ({})) =>
      Promise.all(workers.map((worker, i) => call(worker, { ...message, ...part(i) }, timeoutMs))),
    stop: () => Promise.all(workers.map((worker) => stopChild(worker, 3_000)))
  }
}

/** Waits until `check()` is true, polling every `everyMs`, for at most `timeoutMs`; resolves with the last check. */
export const waitUntil = async (check, timeoutMs, everyMs = 100) => {
  const deadline = now() + timeoutMs
  for (;;) {
    const result = await check()
    if (result || now() > deadline) return result
    await sleep(everyMs)
  }
}
