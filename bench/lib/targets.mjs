// The servers under test: the example server (from its build, or from the
// TypeScript sources through tsx) and the baselines, with the seed data both
// sides start from, and a small JSON client for the API.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isStale, serverDirs } from "../../scripts/sources.mjs"
import { startServer } from "./proc.mjs"

export const benchDir = fileURLToPath(new URL("..", import.meta.url))
export const root = join(benchDir, "..")
export const distMain = join(root, "examples", "server", "dist", "main.js")
const sourceMain = join(root, "examples", "server", "src", "main.ts")

/** The bench user's bearer token; alice owns account acme and deployment dep-1. */
export const token = "bench-token"
export const auth = { authorization: `Bearer ${token}` }
export const deployment = "dep-1"

/** True when the server's or some package's sources changed after the example server was built (the dashboard aside). */
export const buildIsStale = () =>
  serverDirs().some((dir) => dir !== join(root, "examples", "dashboard") && isStale(dir, distMain))

/** The deployment record of the fixtures: dep-1 of acme/helper, deployed by acme, with `spec`. */
const deploymentRecord = (spec) => ({
  id: deployment,
  account: "acme",
  agent: "acme/helper",
  build_id: "b-1",
  namespace: "acme-helper",
  status: "running",
  deployed_at: "2026-01-01T00:00:00Z",
  undeployed_at: null,
  spec
})

/**
 * Writes the example server's fixtures into `dir`: alice with the bench
 * token, owner of acme, and deployment dep-1 of acme/helper with `spec`;
 * `deployments` are further records in the fixtures' format.
 */
export const writeFixtures = (dir, spec = {}, { deployments = [] } = {}) => {
  const path = join(dir, "fixtures.json")
  writeFileSync(path, JSON.stringify({
    users: [{ id: "alice", name: "Alice", tokens: [token] }],
    accounts: [{ name: "acme", members: [{ user: "alice", role: "owner" }] }],
    deployments: [deploymentRecord(spec), ...deployments]
  }))
  return path
}

/**
 * Writes the baselines' seed (the same user, account and deployments as the
 * fixtures; `deployments` as given to `writeFixtures`) plus `extra` into `dir`.
 */
export const writeBaselineSeed = (dir, { endpoint = null, agents = [], files = [], deployments = [] } = {}) => {
  const path = join(dir, "baseline-seed.json")
  writeFileSync(path, JSON.stringify({
    users: [{ id: "alice", name: "Alice", tokens: [token] }],
    members: [{ account: "acme", user: "alice", role: "owner" }],
    deployments: [{ ...deploymentRecord({}), endpoint }, ...deployments],
    agents,
    files
  }))
  return path
}

/** The Node flags a variable of the environment gives, split at spaces. */
const nodeFlags = (variable) => (process.env[variable] ?? "").split(" ").filter((arg) => arg !== "")

/**
 * Starts the example server on a fresh SQLite file and object directory under
 * `dir`; `main` is another build's main.js (`--against`).
 */
export const startExample = (ctx, { dir, fixtures, env = {}, name = "example", main, database = "example.db" }) =>
  startServer({
    name,
    args: [
      // Node flags for the example server, e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"; the
      // --against build takes BENCH_AGAINST_NODE_ARGS where it is set (empty: no flags), to weigh a flag.
      ...nodeFlags(main !== undefined && process.env["BENCH_AGAINST_NODE_ARGS"] !== undefined ? "BENCH_AGAINST_NODE_ARGS" : "BENCH_SERVER_NODE_ARGS"),
      ...(main !== undefined
        ? [main]
        : ctx.mode === "source"
        ? ["--import", "tsx", "--conditions=@hosting/source", sourceMain]
        : [distMain])
    ],
    cwd: root,
    cpus: ctx.cpus.server,
    scope: ctx.scope,
    timeoutMs: ctx.mode === "source" ? 90_000 : 30_000,
    env: {
      HOSTING_PORT: "0",
      HOSTING_HOST: "127.0.0.1",
      HOSTING_DATABASE_URL: `sqlite:${join(dir, database)}`,
      HOSTING_OBJECT_STORE: `fs:${join(dir, `${database}.objects`)}`,
      HOSTING_FIXTURES: fixtures,
      HOSTING_ECHO_DELAY_MS: "0",
      HOSTING_MESSAGE_LIMIT: "1000000",
      // One bench token holds every subscriber (10,000 event streams, 1,000 reply streams).
      HOSTING_MAX_STREAMS_PER_TOKEN: "0",
      // BENCH_SERVER_ENV="HOSTING_ACCESS_LOG=off ...": settings of the example server for one run, to weigh them.
      ...Object.fromEntries((process.env["BENCH_SERVER_ENV"] ?? "").split(" ").filter((pair) => pair.includes("=")).map((pair) => {
        const at = pair.indexOf("=")
        return [pair.slice(0, at), pair.slice(at + 1)]
      })),
      ...env
    }
  })

/**
 * Starts the bench agent (load/agent.mjs, an OpenAI-compatible streaming
 * endpoint) on the load generators' CPUs; its `url` is a deployment's endpoint.
 */
export const startAgent = (ctx) =>
  startServer({
    name: "agent",
    args: [join(benchDir, "load", "agent.mjs")],
    cwd: benchDir,
    cpus: ctx.cpus.load,
    scope: ctx.scope,
    ready: /agent listening on (http:\/\/\S+)/
  })

/** Starts a baseline (`bare` or `fastify`) on its own SQLite file under `dir`; `name` tells two of one kind apart. */
export const startBaseline = (ctx, kind, { dir, seed, env = {}, name = kind }) =>
  startServer({
    name,
    args: [
      // Node flags for the baselines, as BENCH_SERVER_NODE_ARGS gives them to the example server.
      ...nodeFlags("BENCH_BASELINE_NODE_ARGS"),
      join(benchDir, "baseline", `${kind}.mjs`)
    ],
    cwd: benchDir,
    cpus: ctx.cpus.server,
    scope: ctx.scope,
    timeoutMs: 30_000,
    env: { BASELINE_DB: join(dir, `${name}.db`), BASELINE_SEED: seed, ...env }
  })

/**
 * Calls the API at `base` (".../api/v1"); resolves with the status and the
 * body (parsed when JSON). Bounded by `timeoutMs`.
 */
export const api = async (base, method, path, { body, headers = auth, timeoutMs = 30_000 } = {}) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await response.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: response.status, text, json }
}

/** Like `api`, but throws unless the status is `expected`. */
export const apiOk = async (base, method, path, options = {}, expected = [200, 201]) => {
  const result = await api(base, method, path, options)
  if (!expected.includes(result.status)) {
    throw new Error(`${method} ${path} answered ${result.status}: ${result.text.slice(0, 300)}`)
  }
  return result
}
