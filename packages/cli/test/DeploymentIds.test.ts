/**
 * Deployments as people name them (issue 31): `deployments list`, an id's
 * first characters or `account/agent` wherever a deployment id goes, a
 * warning when chatting with an ended deployment, and Ctrl-C during a reply
 * saying how to cancel it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "../../../examples/server/test/process.js"
import { runCli, spawnCli } from "./cli.js"

// Each run of the binary starts Node and tsx: a few seconds on a small machine.
const timeout = 120_000

const dir = mkdtempSync(join(tmpdir(), "hosting-cli-deployment-ids-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("hosting: deployments by list, prefix and agent (issue 31)", () => {
  let server: Running
  const alice = () => ({ configDir: join(dir, "config"), env: { HOSTING_BASE_URL: server.baseUrl, HOSTING_TOKEN: "alice-token" } })

  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off",
      // The echo agent answers a word a second: a reply is still streaming when Ctrl-C comes.
      HOSTING_ECHO_DELAY_MS: "1000"
    }, 60_000)
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
  })

  it("deployments list shows an account's deployments, filtered by status; a bad --status names the choices", async () => {
    const [table, json, ended, bad] = await Promise.all([
      runCli(["deployments", "list", "acme"], alice()),
      runCli(["deployments", "list", "acme", "--status", "live", "--json"], alice()),
      runCli(["deployments", "list", "acme", "--status", "ended"], alice()),
      runCli(["deployments", "list", "acme", "--status", "running"], alice())
    ])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+ACCOUNT\s+AGENT\s+BUILD\s+STATUS/)
    expect(table.stdout.split("\n")[1]).toMatch(/^dep-1\s+acme\s+acme\/helper\s+b-1\s/)
    expect(JSON.parse(json.stdout)).toMatchObject({ deployments: [{ id: "dep-1" }], total: 1, limit: 50, offset: 0 })
    expect(ended).toMatchObject({ code: 0, stdout: "(none)\n" })
    expect(bad.code).toBe(1)
    expect(bad.stderr.split("\n")[0]).toBe(
      "error: --status must be one of live, ended, pending, progressing, available, failed, superseded, undeployed, not \"running\" (invalid_value)"
    )
  }, timeout)

  it("Ctrl-C during a reply says how to cancel it and exits 130; that command cancels it", async () => {
    const send = spawnCli(["chat", "send", "dep-1", "one two three four five six seven eight nine ten eleven twelve"], alice())
    const [, conversation] = await send.waitFor(/^conversation ([0-9a-f-]{36})$/m, 60_000)
    await send.waitFor(/one/, 30_000)
    send.child.kill("SIGINT")
    const stopped = await send.result(30_000)
    expect(stopped.code).toBe(130)
    expect(stopped.stderr.trim().split("\n").at(-1)).toBe(
      `stopped following the reply, which goes on on the server; cancel it with: hosting chat cancel dep-1 ${conversation}`
    )
    const cancel = await runCli(["chat", "cancel", "dep-1", conversation!], alice())
    expect(cancel.code, cancel.stderr).toBe(0)
    expect(cancel.stdout).toMatch(/^Cancelled the reply \S+\.\n$/)
  }, timeout)

  it("a deployment is named by its id, its first characters or account/agent; an ambiguous start lists the candidates", async () => {
    const [byPrefix, byAgent, missing] = await Promise.all([
      runCli(["deployments", "get", "dep-", "--json"], alice()),
      runCli(["chat", "list", "acme/helper", "--json"], alice()),
      runCli(["deployments", "get", "nothing"], alice())
    ])
    expect(byPrefix.code, byPrefix.stderr).toBe(0)
    expect(JSON.parse(byPrefix.stdout).id).toBe("dep-1")
    expect(byAgent.code, byAgent.stderr).toBe(0)
    expect(JSON.parse(byAgent.stdout).conversations.length).toBe(1)
    expect(missing).toMatchObject({ code: 4, stderr: "error: no deployment of your accounts is or starts with nothing (deployment_not_found)\n" })

    // A new deployment of the agent supersedes dep-1.
    const spec = join(dir, "helper.yaml")
    writeFileSync(spec, "name: helper\ndescription: Answers questions\n")
    expect((await runCli(["agents", "register", "acme/helper", "--build-id", "b-1", "--registry", "ghcr.io/acme", "--spec", spec], alice())).code)
      .toBe(0)
    expect((await runCli(["agents", "publish", "acme/helper@1.0.0", "--build-id", "b-1"], alice())).code).toBe(0)
    const created = await runCli(["deployments", "create", "acme/helper@1.0.0", "--json"], alice())
    expect(created.code, created.stderr).toBe(0)
    const id: string = JSON.parse(created.stdout).id
    expect(id).toMatch(/^dep-/)

    const [ambiguous, live, short, short2] = await Promise.all([
      runCli(["deployments", "get", "dep-"], alice()),
      runCli(["deployments", "get", "acme/helper", "--json"], alice()),
      runCli(["deployments", "get", id.slice(0, 10), "--json"], alice()),
      // Without `dep-`, as people read ids.
      runCli(["files", "list", id.slice(4, 10), "--json"], alice())
    ])
    expect(ambiguous.code).toBe(1)
    const candidates = [`dep-1 (acme/helper in acme, superseded)`, `${id} (acme/helper in acme, `]
    expect(ambiguous.stderr).toMatch(/^error: dep- starts 2 deployments: .*; give more of the id \(ambiguous_id\)\n$/)
    for (const c of candidates) expect(ambiguous.stderr).toContain(c)
    expect(JSON.parse(live.stdout).id).toBe(id)
    expect(JSON.parse(short.stdout).id).toBe(id)
    expect(short2.code, short2.stderr).toBe(0)
    expect(JSON.parse(short2.stdout)).toMatchObject({ files: [] })
  }, timeout * 2)

  // After the test above: dep-1 is superseded.
  it("chat send to a superseded deployment warns on stderr, then says what the API said", async () => {
    const sent = await runCli(["chat", "send", "dep-1", "hello", "--json"], alice())
    const lines = sent.stderr.split("\n")
    expect(lines[0]).toMatch(
      /^warning: dep-1 is superseded \(ended \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); sending to it anyway\. `hosting chat send acme\/helper …` sends to the agent's live deployment$/
    )
    // Whatever the API answers is shown as it always is: a reply, or `error: … (<code>)`.
    expect(sent.code === 0 ? JSON.parse(sent.stdout).reply.status : lines[1]).toMatch(/^(complete|error: .+ \(\w+\))$/)
  }, timeout)
})
