/**
 * What the browser tests need around them: a fresh build of the dashboard,
 * an example server started from source with fixtures and that build, and
 * Debian's Chromium driven by playwright-core. Everything started here is
 * stopped by the caller through the handles returned; every wait is bounded.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createConnection, createServer, type Socket } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { describe, expect, it } from "vitest"

/** The dashboard package's folder. */
export const packageDir = fileURLToPath(new URL("..", import.meta.url))
const repoRoot = join(packageDir, "..", "..")
export const distDir = join(packageDir, "dist")
export const resultsDir = join(packageDir, "test-results")
const docsShotsDir = join(repoRoot, "docs", "dashboard")

/** The browser the tests drive: Debian's Chromium, or `HOSTING_TEST_CHROMIUM`. */
export const chromiumPath = process.env["HOSTING_TEST_CHROMIUM"] ?? "/usr/bin/chromium"
export const hasChromium = existsSync(chromiumPath)
/** `HOSTING_TEST_BROWSER_REQUIRED=1` turns a missing browser into a failure instead of a skip. */
export const browserRequired = process.env["HOSTING_TEST_BROWSER_REQUIRED"] === "1"

/**
 * A suite that runs in Chromium: its title says why it is skipped when the
 * browser is missing, and a failing test says so when
 * HOSTING_TEST_BROWSER_REQUIRED=1 (CI) asks for the browser.
 */
export const describeInBrowser = (name: string, suite: () => void) => {
  it.runIf(browserRequired && !hasChromium)("a browser is required (HOSTING_TEST_BROWSER_REQUIRED=1)", () => {
    expect.fail(`HOSTING_TEST_BROWSER_REQUIRED=1 but ${chromiumPath} does not exist: install Chromium (apt-get install chromium) or set HOSTING_TEST_CHROMIUM`)
  })
  const title = hasChromium ? name : `${name} (skipped: ${chromiumPath} is missing; apt-get install chromium, or set HOSTING_TEST_CHROMIUM)`
  describe.skipIf(!hasChromium)(title, suite)
}

const newestIn = (path: string): number => {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = stat.mtimeMs
  for (const entry of readdirSync(path)) {
    if (entry === "node_modules" || entry === "dist") continue
    latest = Math.max(latest, newestIn(join(path, entry)))
  }
  return latest
}

/**
 * True when `dist/` is missing or older than anything it is built from: the
 * dashboard's sources and the sources of the workspace packages it bundles.
 */
export const isBuildStale = () => {
  const built = join(distDir, "index.html")
  if (!existsSync(built)) return true
  const inputs = [
    join(packageDir, "src"),
    join(packageDir, "public"),
    join(packageDir, "index.html"),
    join(packageDir, "vite.config.ts"),
    ...["client", "api", "core"].map((name) => join(repoRoot, "packages", name, "src"))
  ]
  return Math.max(...inputs.map(newestIn)) > statSync(built).mtimeMs
}

/**
 * Runs `vite build` when the build is stale; fails after `timeoutMs`. It
 * builds into a folder of its own and then swaps it in, so that a server
 * started meanwhile from `dist/` (another test's) never sees half a build.
 */
export const ensureBuilt = async (timeoutMs = 180_000) => {
  if (!isBuildStale()) return
  const vite = join(packageDir, "node_modules", "vite", "bin", "vite.js")
  const staging = join(packageDir, `.dist-build-${process.pid}`)
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [vite, "build", "--logLevel", "warn", "--outDir", staging], {
      cwd: packageDir,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`vite build did not finish within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`vite build failed (${code}):\n${output}`))
    })
  }).catch((error: unknown) => {
    rmSync(staging, { recursive: true, force: true })
    throw error
  })
  rmSync(distDir, { recursive: true, force: true })
  renameSync(staging, distDir)
}

/** A running example server. */
export interface Server {
  /** `http://127.0.0.1:<port>`: the dashboard's origin. */
  readonly origin: string
  /** The API's base address, `<origin>/api/v1`. */
  readonly api: string
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const serverMain = join(repoRoot, "examples", "server", "src", "main.ts")

/** Starts the example server from source (as its own tests do) and resolves once it listens. */
export const startServer = (env: Record<string, string>, timeoutMs = 30_000) =>
  new Promise<Server>((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "--conditions=@hosting/source", serverMain], {
      cwd: repoRoot,
      env: { ...process.env, HOSTING_PORT: "0", HOSTING_HOST: "127.0.0.1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const stop = () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done()
        const kill = setTimeout(() => child.kill("SIGKILL"), 10_000)
        child.once("exit", () => {
          clearTimeout(kill)
          done()
        })
        child.kill("SIGTERM")
      })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the server did not start within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    child.stdout!.on("data", (data: Buffer) => {
      output += data
      const listening = /listening on (http:\/\/\S+)\/api\/v1/.exec(output)
      if (listening) {
        clearTimeout(timer)
        resolve({ origin: listening[1]!, api: `${listening[1]!}/api/v1`, output: () => output, stop })
      }
    })
    child.stderr!.on("data", (data: Buffer) => (output += data))
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`the server exited with ${code} before listening:\n${output}`))
    })
  })

/** Launches Chromium headless, with nothing that reaches out to the network by itself. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    timeout: 30_000,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** What `accessibilityReport` finds on a page. */
export interface AccessibilityReport {
  readonly h1: number
  readonly main: number
  readonly nav: number
  /** Visible controls without an accessible name (the start of their HTML). */
  readonly unnamed: ReadonlyArray<string>
  /** Elements other than links and buttons that react to clicks only. */
  readonly mouseOnly: number
  readonly imagesWithoutAlt: number
  /** Visible controls taken out of the tab order. */
  readonly negativeTab: number
}

/**
 * What every page owes to keyboard and screen-reader users, counted in the
 * page: its h1s and landmarks, controls without a name, controls reachable
 * only by mouse, images without alt text.
 */
export const accessibilityReport = (page: Page): Promise<AccessibilityReport> =>
  page.evaluate(() => {
    const visible = (el: Element) => (el as HTMLElement).offsetParent !== null || el.getClientRects().length > 0
    const named = (el: Element) => {
      const labelled = el.getAttribute("aria-labelledby")
      return (
        ((el as HTMLInputElement).labels?.length ?? 0) > 0 ||
        (el.getAttribute("aria-label") ?? "").trim() !== "" ||
        (labelled !== null && labelled.split(" ").every((id) => document.getElementById(id) !== null)) ||
        (el.tagName !== "INPUT" && el.tagName !== "SELECT" && el.tagName !== "TEXTAREA" && (el.textContent ?? "").trim() !== "")
      )
    }
    const controls = [...document.querySelectorAll("input, select, textarea, button, a[href]")].filter(visible)
    return {
      h1: document.querySelectorAll("h1").length,
      main: document.querySelectorAll("main").length,
      nav: document.querySelectorAll("nav[aria-label]").length,
      unnamed: controls.filter((el) => !named(el)).map((el) => el.outerHTML.slice(0, 120)),
      mouseOnly: [...document.querySelectorAll("[onclick]:not(a):not(button)")].length,
      imagesWithoutAlt: [...document.querySelectorAll("img:not([alt])")].length,
      negativeTab: controls.filter((el) => el.getAttribute("tabindex") === "-1").length
    }
  })

/** Where a screenshot goes; with `HOSTING_DASHBOARD_SCREENSHOTS=docs` it is also copied to docs/dashboard/. */
export const screenshotPath = (name: string) => {
  mkdirSync(resultsDir, { recursive: true })
  return join(resultsDir, `${name}.png`)
}

/**
 * Checks what every page owes to keyboard and screen-reader users (one h1,
 * a main landmark and at least one navigation, a name for every control and
 * image, no control reachable only by mouse), then saves its screenshot.
 */
export const checkAndShoot = async (target: Page, name: string) => {
  const report = await accessibilityReport(target)
  expect(report, name).toEqual({ h1: 1, main: 1, nav: report.nav, unnamed: [], mouseOnly: 0, imagesWithoutAlt: 0, negativeTab: 0 })
  expect(report.nav, name).toBeGreaterThanOrEqual(1)
  await target.screenshot({ path: screenshotPath(name), fullPage: true })
}

/** Copies the screenshots of this run to docs/dashboard/ when asked to. */
export const publishScreenshots = (names: ReadonlyArray<string>) => {
  if (process.env["HOSTING_DASHBOARD_SCREENSHOTS"] !== "docs") return
  mkdirSync(docsShotsDir, { recursive: true })
  for (const name of names) {
    const from = join(resultsDir, `${name}.png`)
    if (existsSync(from)) copyFileSync(from, join(docsShotsDir, `${name}.png`))
  }
}

/** Calls the API with a bearer token, as a script or the CLI would. */
export const api = async (server: Server, method: string, path: string, token: string, body?: unknown) => {
  const response = await fetch(`${server.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) as any }
}

/**
 * Approves a device login the way a person does on the server's page:
 * sign in there with a platform token, then post the decision with the
 * form's CSRF value.
 */
export const approveDeviceLogin = async (server: Server, token: string, userCode: string) => {
  const form = { "content-type": "application/x-www-form-urlencoded" }
  const signedIn = await fetch(`${server.api}/device/session`, {
    method: "POST",
    headers: form,
    body: new URLSearchParams({ token, user_code: userCode })
  })
  const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!
  const page = await signedIn.text()
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1]
  if (csrf === undefined) throw new Error(`no CSRF value on the approval page (${signedIn.status}):\n${page.slice(0, 500)}`)
  const decided = await fetch(`${server.api}/device`, {
    method: "POST",
    headers: { ...form, cookie },
    body: new URLSearchParams({ user_code: userCode, decision: "approve", csrf })
  })
  if (decided.status !== 200) throw new Error(`the approval answered ${decided.status}: ${await decided.text()}`)
}

/**
 * The fixtures of the tests: alice (owner) and bob (member) of acme, the
 * deployment dep-1 of acme/helper with its fake-cluster pod and ConfigMap, a
 * file of alice's, and 45 traces of acme/helper (every fourth one an error)
 * so that there is something to page through; `moreUsers` in no account,
 * each with the token `<id>-token`.
 */
export const writeFixtures = (dir: string, moreUsers: ReadonlyArray<{ readonly id: string; readonly name: string }> = []): string => {
  const path = join(dir, "fixtures.json")
  const start = Date.parse("2026-11-01T08:00:00Z")
  const traces = Array.from({ length: 45 }, (_, i) => ({
    agent: "acme/helper",
    trace_id: `t-${String(i + 1).padStart(3, "0")}`,
    name: "chat",
    status: (i + 1) % 4 === 0 ? "error" : "ok",
    latency_ms: 40 + ((i * 37) % 160) + (i % 4 === 3 ? 300 : 0),
    input: `question ${i + 1}`,
    output: (i + 1) % 4 === 0 ? "the agent failed" : `answer ${i + 1}`,
    timestamp: new Date(start + i * 6 * 60_000).toISOString()
  }))
  writeFileSync(path, JSON.stringify({
    users: [
      { id: "alice", name: "Alice", tokens: ["alice-token"] },
      { id: "bob", name: "Bob", tokens: ["bob-token"] },
      ...moreUsers.map((user) => ({ ...user, tokens: [`${user.id}-token`] }))
    ],
    accounts: [{ name: "acme", members: [{ user: "alice", role: "owner" }, { user: "bob", role: "member" }] }],
    deployments: [{
      id: "dep-1",
      account: "acme",
      agent: "acme/helper",
      build_id: "b-0",
      namespace: "acme-helper",
      status: "running",
      deployed_at: "2026-11-01T07:00:00Z",
      undeployed_at: null,
      spec: {}
    }],
    cluster: {
      configmaps: [{ namespace: "acme-helper", name: "helper-env", data: { LOG_LEVEL: "info" } }],
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
    traces
  }))
  return path
}

/** A TCP relay in front of the server whose connections can be cut, to test reconnection. */
export interface Relay {
  /** `http://127.0.0.1:<port>` of the relay. */
  readonly origin: string
  /** Cuts every open connection and refuses new ones until `restore`. */
  readonly cut: () => void
  readonly restore: () => void
  readonly close: () => Promise<void>
}

/** Starts a relay to `target` (an `http://host:port` origin) on a free loopback port. */
export const startRelay = (target: string) =>
  new Promise<Relay>((resolve, reject) => {
    const { hostname, port } = new URL(target)
    const open = new Set<Socket>()
    let down = false
    const server = createServer((client) => {
      if (down) return client.destroy()
      const upstream = createConnection({ host: hostname, port: Number(port) })
      open.add(client)
      open.add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        open.delete(client)
        open.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("the relay has no port"))
      resolve({
        origin: `http://127.0.0.1:${address.port}`,
        cut: () => {
          down = true
          for (const socket of open) socket.destroy()
          open.clear()
        },
        restore: () => {
          down = false
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of open) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
