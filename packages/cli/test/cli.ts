/**
 * Runs the real `hosting` binary (from source, through tsx) as a child
 * process, the way a user or a script runs it, with a config directory of
 * its own and no token from the environment.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
// An absolute loader, so that the CLI runs from any working directory.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface Options {
  /** The config directory (HOSTING_CONFIG_DIR). */
  readonly configDir: string
  readonly env?: Record<string, string>
  readonly cwd?: string
  /** Written to the command's stdin, which is then closed (by default stdin is closed at once). */
  readonly input?: string
  /** `closed`: the reader of stdout goes away at once, as `head` does once it has its lines. */
  readonly stdout?: "closed"
}

const environment = (options: Options) => {
  const env: Record<string, string | undefined> = { ...process.env, HOSTING_CONFIG_DIR: options.configDir, ...options.env }
  // The tests decide what the CLI knows; nothing leaks in from the shell that runs them.
  for (const name of ["HOSTING_TOKEN", "HOSTING_BASE_URL", "HOSTING_PROFILE"]) {
    if (options.env?.[name] === undefined) delete env[name]
  }
  return env
}

/** Starts `hosting <args>` in the background. */
export const spawnCli = (args: ReadonlyArray<string>, options: Options) => {
  const child: ChildProcess = spawn(process.execPath, ["--import", tsx, "--conditions=@hosting/source", bin, ...args], {
    env: environment(options),
    cwd: options.cwd ?? process.cwd(),
    stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
  })
  if (options.input !== undefined) child.stdin!.end(options.input)
  if (options.stdout === "closed") child.stdout!.destroy()
  let stdout = ""
  let stderr = ""
  /** Each piece of stdout as it arrived, for checks that output streams. */
  const chunks: Array<string> = []
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d
    chunks.push(d.toString())
  })
  child.stderr!.on("data", (d: Buffer) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return {
    child,
    chunks,
    output: () => ({ stdout, stderr }),
    /** Waits until stdout or stderr matches, failing after `timeoutMs`. */
    waitFor: async (pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> => {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const match = pattern.exec(stdout) ?? pattern.exec(stderr)
        if (match) return match
        if (child.exitCode !== null) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`no ${pattern} within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`)
    },
    /** Resolves with the result once the process exits; kills it after `timeoutMs`. */
    result: async (timeoutMs = 25_000): Promise<Result> => {
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
      const code = await exited
      clearTimeout(timer)
      return { code, stdout, stderr }
    }
  }
}

/** Runs `hosting <args>` to its end. */
export const runCli = (args: ReadonlyArray<string>, options: Options, timeoutMs?: number): Promise<Result> =>
  spawnCli(args, options).result(timeoutMs)
