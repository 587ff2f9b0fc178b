/**
 * Runs the example server as its own process (from source through tsx), as
 * `pnpm start` would, and reads its output.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

export interface Running {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly output: () => string
  /** Sends a signal and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/** Calls a running server with JSON; resolves with the status and the parsed body. */
export const call = async (server: Running, method: string, path: string, token?: string, body?: unknown) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {})
  })
  return { status: response.status, body: await response.json() as any }
}

/**
 * Approves or denies a device login the way a person does, with plain HTTP
 * form posts: the page (which asks to sign in), sign-in with a platform token
 * (an HttpOnly session cookie and a form with its CSRF value), the decision.
 */
export const decideOnPage = async (baseUrl: string, token: string, userCode: string, decision: "approve" | "deny") => {
  const first = await fetch(`${baseUrl}/device?user_code=${encodeURIComponent(userCode)}`)
  const signInForm = (await first.text()).includes("name=\"token\"")
  const form = { "content-type": "application/x-www-form-urlencoded" }
  const signedIn = await fetch(`${baseUrl}/device/session`, {
    method: "POST",
    headers: form,
    body: new URLSearchParams({ token, user_code: userCode })
  })
  const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!
  const csrf = /name="csrf" value="([^"]+)"/.exec(await signedIn.text())?.[1] ?? ""
  const decided = await fetch(`${baseUrl}/device`, {
    method: "POST",
    headers: { ...form, cookie },
    body: new URLSearchParams({ user_code: userCode, decision, csrf })
  })
  return { status: decided.status, html: await decided.text(), signInForm }
}

/** Output and exit code of a server that is expected to refuse to start. */
export const runToExit = (env: Record<string, string>, timeoutMs = 20_000, args: ReadonlyArray<string> = []) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawnServer(env, args)
    let output = ""
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`server did not exit within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

/** Starts the server process without waiting for it (HOSTING_PORT 0, a free port, unless `env` names one). */
export const spawnServer = (env: Record<string, string>, args: ReadonlyArray<string> = []) =>
  spawn(process.execPath, ["--import", "tsx", "--conditions=@hosting/source", main, ...args], {
    env: { ...process.env, HOSTING_PORT: "0", HOSTING_HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** A port no one listens on now, for a server whose port must be known before it starts. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** Starts the server and resolves once it prints its listening line. */
export const start = (env: Record<string, string>, timeoutMs = 20_000) =>
  new Promise<Running>((resolve, reject) => {
    const child = spawnServer(env)
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    const onData = (data: Buffer) => {
      output += data
      const match = /listening on (http:\/\/\S+\/api\/v1)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({
          child,
          baseUrl: match[1]!,
          output: () => output,
          stop: (signal = "SIGTERM") =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode)
              const kill = setTimeout(() => child.kill("SIGKILL"), 10_000)
              child.once("exit", (code) => {
                clearTimeout(kill)
                done(code)
              })
              child.kill(signal)
            })
        })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (d) => (output += d))
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before listening:\n${output}`))
    })
  })

/**
 * Writes the fixtures the server tests share into `dir`: alice (owner) and
 * bob (member) of acme, deployment dep-1 of acme/helper in namespace
 * acme-helper, and its fake-cluster objects. Returns the file's path.
 */
export const writeFixtures = (dir: string): string => {
  const path = join(dir, "fixtures.json")
  writeFileSync(path, JSON.stringify({
    users: [{ id: "alice", name: "Alice", tokens: ["alice-token"] }, { id: "bob", name: "Bob", tokens: ["bob-token"] }],
    accounts: [{ name: "acme", members: [{ user: "alice", role: "owner" }, { user: "bob", role: "member" }] }],
    deployments: [{
      id: "dep-1",
      account: "acme",
      agent: "acme/helper",
      build_id: "b-1",
      namespace: "acme-helper",
      status: "running",
      deployed_at: "2026-11-01T10:00:00Z",
      undeployed_at: null,
      spec: {}
    }],
    cluster: {
      configmaps: [{ namespace: "acme-helper", name: "helper-env", data: { K: "V" } }],
      pods: [{ namespace: "acme-helper", name: "helper-0" }]
    },
    files: [{
      deployment: "dep-1",
      owner: "alice",
      key: "f-notes",
      filename: "notes.txt",
      content_type: "text/plain",
      content: "hello",
      status: "ready"
    }],
    traces: [{
      agent: "acme/helper",
      trace_id: "t-1",
      name: "chat",
      status: "ok",
      latency_ms: 12.5,
      input: "hi",
      output: "hello",
      timestamp: "2026-11-01T10:00:00Z"
    }]
  }))
  return path
}

/**
 * Servers of one test file, started on an in-memory database with the
 * shared fixtures (written into `dir`) and the given settings, and stopped
 * with `stopAll` (in `afterAll`).
 */
export const serversWithFixtures = (dir: string) => {
  const running: Array<Running> = []
  return {
    start: async (env: Record<string, string>) => {
      const server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_OBJECT_STORE: "memory:", HOSTING_FIXTURES: writeFixtures(dir), ...env })
      running.push(server)
      return server
    },
    stopAll: () => Promise.all(running.map((s) => s.stop()))
  }
}
