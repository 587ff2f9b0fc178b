/**
 * The `hosting` binary against the example server (its own process, fixtures
 * of alice, owner of acme, and bob, a member): the catalog, chat with the
 * reply printed as it streams, files with progress, traces, the event stream,
 * JSON output and the exit codes scripts rely on.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "../../../examples/server/test/process.js"
import { runCli, spawnCli } from "./cli.js"

// Each run of the binary starts Node and tsx: a few seconds on a small machine.
const timeout = 90_000

const dir = mkdtempSync(join(tmpdir(), "hosting-cli-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("hosting (the CLI)", () => {
  let server: Running
  // Every run gets the server's address and a config directory with no profile in it.
  const as = (token?: string) => ({
    configDir: join(dir, "config"),
    env: { HOSTING_BASE_URL: server.baseUrl, ...(token === undefined ? {} : { HOSTING_TOKEN: token }) }
  })
  const alice = () => as("alice-token")

  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_ECHO_DELAY_MS: "40",
      // The fixture's trace is dated 2026-11-01: kept whatever today's date, past the default retention.
      HOSTING_TRACE_RETENTION_DAYS: "0"
    })
  })
  afterAll(async () => {
    await server?.stop()
  })

  it("registers, publishes, lists and shows an agent; --json output parses", async () => {
    const spec = join(dir, "helper.yaml")
    writeFileSync(spec, "name: helper\ndescription: Answers questions\n")
    const registered = await runCli(["agents", "register", "acme/helper", "--build-id", "b-1", "--registry", "ghcr.io/acme", "--spec", spec], alice())
    expect(registered).toMatchObject({ code: 0, stdout: "Registered acme/helper build b-1.\n" })
    const published = await runCli(["agents", "publish", "acme/helper@1.0.0", "--build-id", "b-1"], alice())
    expect(published).toMatchObject({ code: 0, stdout: "Published acme/helper build b-1 as 1.0.0.\n" })

    const table = await runCli(["agents", "list"], as())
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^AGENT\s+VERSION\s+PUBLISHED\s+DESCRIPTION\n/)
    expect(table.stdout).toMatch(/acme\/helper\s+1\.0\.0\s+\S+\s+Answers questions/)

    // --json anywhere on the line; stdout is one JSON document.
    const listed = await runCli(["agents", "list", "--json"], as())
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toMatchObject({ agents: [{ account: "acme", name: "helper", latest_version: "1.0.0" }], total: 1 })
    const shown = await runCli(["--json", "agents", "get", "acme/helper"], alice())
    const agent = JSON.parse(shown.stdout)
    expect(agent).toMatchObject({ account: "acme", name: "helper", registry: "ghcr.io/acme" })
    expect(agent.versions).toEqual([expect.objectContaining({ build_id: "b-1", version: "1.0.0", published_at: expect.stringMatching(/Z$/) })])
  }, timeout)

  it("chat send prints the reply as it streams, token by token", async () => {
    const text = "one two three four five six seven eight"
    const send = spawnCli(["chat", "send", "dep-1", text], alice())
    const result = await send.result()
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`${text}\n`)
    expect(result.stderr).toMatch(/^conversation [0-9a-f-]{36}\n/)
    // Printed piece by piece as the deltas arrived (40 ms apart), not at the end in one write.
    expect(send.chunks.length).toBeGreaterThanOrEqual(3)

    const conversation = /conversation ([0-9a-f-]{36})/.exec(result.stderr)![1]!
    const json = await runCli(["chat", "send", "dep-1", "and again", "--conversation", conversation, "--json"], alice())
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({
      conversation_id: conversation,
      reply: { status: "complete", content: "and again" }
    })
    const history = await runCli(["chat", "history", "dep-1", conversation, "--json"], alice())
    expect(JSON.parse(history.stdout).messages.map((m: { role: string; content: string }) => `${m.role}:${m.content}`)).toEqual([
      `user:${text}`,
      `assistant:${text}`,
      "user:and again",
      "assistant:and again"
    ])
  }, timeout)

  it("deployments settings shows and sets concurrent_send (owner or admin); chat send --concurrent-send overrides it (issue 28)", async () => {
    const shown = await runCli(["deployments", "settings", "dep-1"], as("bob-token"))
    expect(shown).toMatchObject({ code: 0, stdout: "concurrent send: interrupt\n" })
    const [member, bad] = await Promise.all([
      runCli(["deployments", "settings", "dep-1", "--concurrent-send", "reject"], as("bob-token")),
      runCli(["deployments", "settings", "dep-1", "--concurrent-send", "sometimes"], alice())
    ])
    expect(member.code).toBe(3)
    expect(member.stderr).toMatch(/\(forbidden\)/)
    expect(bad.code).toBe(1)
    const set = await runCli(["deployments", "settings", "dep-1", "--concurrent-send", "reject"], alice())
    expect(set).toMatchObject({ code: 0, stdout: "Set the settings of dep-1.\nconcurrent send: reject\n" })
    const got = await runCli(["deployments", "get", "dep-1", "--json"], alice())
    expect(JSON.parse(got.stdout).settings).toEqual({ concurrent_send: "reject" })
    // Back to the default, for the tests that follow.
    const reset = await runCli(["deployments", "settings", "dep-1", "--concurrent-send", "interrupt", "--json"], alice())
    expect(JSON.parse(reset.stdout)).toEqual({ concurrent_send: "interrupt" })

    // A long reply (about 16 s: a start of the CLI takes seconds on a small machine), sent over HTTP; the CLI's sends
    // arrive while it streams.
    const conversation = globalThis.crypto.randomUUID()
    const long = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ")
    const first = await fetch(`${server.baseUrl}/deployments/dep-1/messaging/conversations/${conversation}/messages`, {
      method: "POST",
      headers: { authorization: "Bearer alice-token", "content-type": "application/json" },
      body: JSON.stringify({ content: long })
    })
    expect(first.status).toBe(200)
    const refused = await runCli(["chat", "send", "dep-1", "not now", "--conversation", conversation, "--concurrent-send", "reject"], alice())
    expect(refused.code).toBe(5)
    expect(refused.stderr).toMatch(/^error: .+ \(reply_in_progress\)\n/)
    const queued = await runCli(["chat", "send", "dep-1", "after you", "--conversation", conversation, "--concurrent-send", "queue", "--json"], alice())
    expect(queued.code, queued.stderr).toBe(0)
    expect(JSON.parse(queued.stdout)).toMatchObject({ reply: { status: "complete", content: "after you" } })
    const history = await runCli(["chat", "history", "dep-1", conversation, "--json"], alice())
    expect(JSON.parse(history.stdout).messages.map((m: { role: string; status: string }) => `${m.role}:${m.status}`)).toEqual([
      "user:complete",
      "assistant:complete",
      "user:complete",
      "assistant:complete"
    ])
  }, timeout)

  it("files upload and download round-trip the bytes, with progress as bytes/total on stderr", async () => {
    const bytes = Buffer.alloc(300_000, 0).map((_, i) => (i * 7) % 256)
    const source = join(dir, "data.bin")
    writeFileSync(source, bytes)
    const uploaded = await runCli(["files", "upload", "dep-1", source, "--json"], alice())
    expect(uploaded.code).toBe(0)
    const file = JSON.parse(uploaded.stdout)
    expect(file).toMatchObject({ filename: "data.bin", size: 300_000, status: "ready" })
    expect(uploaded.stderr).toContain("upload data.bin: 0/300000 bytes (0%)")
    expect(uploaded.stderr).toContain("upload data.bin: 300000/300000 bytes (100%)")

    const into = mkdtempSync(join(dir, "download-"))
    const downloaded = await runCli(["files", "download", "dep-1", file.key], { ...alice(), cwd: into })
    expect(downloaded.code).toBe(0)
    expect(downloaded.stdout).toBe("Downloaded data.bin (300000 bytes) to data.bin.\n")
    expect(downloaded.stderr).toContain("download data.bin: 300000/300000 bytes (100%)")
    expect(Buffer.compare(readFileSync(join(into, "data.bin")), bytes)).toBe(0)

    // Not over an existing file without --force; to stdout with -o -.
    const again = await runCli(["files", "download", "dep-1", file.key], { ...alice(), cwd: into })
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("error: data.bin exists; pass --force to overwrite it (file_exists)")
    const notes = await runCli(["files", "download", "dep-1", "f-notes", "-o", "-"], alice())
    expect(notes).toMatchObject({ code: 0, stdout: "hello" })

    const listed = await runCli(["files", "list", "dep-1", "--json"], alice())
    expect(JSON.parse(listed.stdout).files.map((f: { key: string }) => f.key)).toEqual(expect.arrayContaining([file.key, "f-notes"]))
  }, timeout)

  it("traces list --json gives the page; filters go to the server", async () => {
    const all = await runCli(["traces", "list", "acme/helper", "--json"], alice())
    expect(all.code).toBe(0)
    const page = JSON.parse(all.stdout)
    expect(page).toMatchObject({ limit: 50, offset: 0 })
    expect(page.traces.map((t: { trace_id: string }) => t.trace_id)).toContain("t-1")
    const filtered = await runCli(
      ["traces", "list", "acme/helper", "--status", "error", "--start", "2026-01-01T00:00:00Z", "--limit", "5", "--json"],
      alice()
    )
    expect(JSON.parse(filtered.stdout)).toMatchObject({ traces: [], limit: 5 })
    const table = await runCli(["traces", "list", "acme/helper", "--end", "2026-11-01T10:00:00Z"], alice())
    expect(table.stdout).toMatch(
      /^TRACE\s+TIME\s+NAME\s+STATUS\s+LATENCY\s+MODEL\s+TOKENS\s+INPUT\s+OUTPUT\nt-1\s+2026-11-01T10:00:00Z\s+chat\s+ok\s+12\.5 ms\s+-\s+-\s+hi\s+hello\n/
    )
    // A page at a time: --limit 1 prints the cursor of the next page, which --cursor takes; --model filters.
    const byModel = await runCli(["traces", "list", "acme/helper", "--model", "no-such-model", "--json"], alice())
    expect(JSON.parse(byModel.stdout)).toMatchObject({ traces: [] })
    // A turn is traced: with it there are two traces at least, so one a page leaves a next one.
    expect((await runCli(["chat", "send", "dep-1", "trace this turn"], alice())).code).toBe(0)
    const firstPage = async () => JSON.parse((await runCli(["traces", "list", "acme/helper", "--limit", "1", "--json"], alice())).stdout)
    let first = await firstPage()
    for (let tries = 0; first.next_cursor === null && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      first = await firstPage()
    }
    expect(first.next_cursor).toEqual(expect.any(String))
    const paged = await runCli(["traces", "list", "acme/helper", "--limit", "1"], alice())
    expect(paged.stdout).toContain(`next page: --cursor ${first.next_cursor}\n`)
    const next = JSON.parse((await runCli(["traces", "list", "acme/helper", "--limit", "1", "--cursor", first.next_cursor, "--json"], alice())).stdout)
    expect(next.traces).toHaveLength(1)
    expect(next.traces[0].trace_id).not.toBe(first.traces[0].trace_id)
    const badCursor = await runCli(["traces", "list", "acme/helper", "--cursor", "not a cursor"], alice())
    expect(badCursor.code).not.toBe(0)
    expect(badCursor.stderr).toContain("--cursor")
    const shown = await runCli(["traces", "show", "acme/helper", "t-1", "--json"], alice())
    expect(shown.code).toBe(0)
    expect(JSON.parse(shown.stdout)).toMatchObject({ trace_id: "t-1", input: "hi", spans: [], model: null, usage: null })
    const text = await runCli(["traces", "show", "acme/helper", "t-1"], alice())
    expect(text.stdout).toMatch(/^t-1\s+chat\s+ok\s+12\.5 ms\s+2026-11-01T10:00:00Z\ninput: hi\noutput: hello\n$/)
    const missing = await runCli(["traces", "show", "acme/helper", "t-none"], alice())
    expect(missing.code).not.toBe(0)
  }, timeout)

  it("events follow prints each event as it comes, and stops cleanly on Ctrl-C", async () => {
    const follow = spawnCli(["events", "follow", "acme", "--json"], as("bob-token"))
    await follow.waitFor(/"event":"ready"/)
    const spec = join(dir, "helper.yaml")
    const registered = await runCli(["agents", "register", "acme/helper", "--build-id", "b-2", "--registry", "ghcr.io/acme", "--spec", spec], alice())
    expect(registered.code).toBe(0)
    const line = await follow.waitFor(/^\{"event":"agent\.build".*\}$/m)
    expect(JSON.parse(line[0])).toMatchObject({ event: "agent.build", id: expect.any(String), data: { agent: "acme/helper", build_id: "b-2" } })
    follow.child.kill("SIGINT")
    expect((await follow.result(10_000)).code).toBe(0)
  }, timeout)

  it("exits with the documented codes and prints `error: <details> (<code>)`", async () => {
    const [anonymous, forbidden, missing, usage, unknown, unreachable] = await Promise.all([
      runCli(["me"], as()),
      runCli(["agents", "publish", "acme/helper@2.0.0", "--build-id", "b-1"], as("bob-token")),
      runCli(["agents", "get", "acme/nothing-here"], alice()),
      runCli(["agents", "get", "not-a-ref"], alice()),
      runCli(["agents", "fly"], alice()),
      runCli(["agents", "list"], { configDir: join(dir, "config"), env: { HOSTING_BASE_URL: "http://127.0.0.1:1/api/v1" } })
    ])
    expect(anonymous.code).toBe(2)
    expect(anonymous.stderr).toMatch(/^error: .+ \(unauthorized\)\n/)
    expect(anonymous.stdout).toBe("")
    expect(forbidden.code).toBe(3)
    expect(forbidden.stderr).toMatch(/\(forbidden\)/)
    expect(missing.code).toBe(4)
    expect(missing.stderr).toMatch(/^error: .+ \(agent_not_found\)\n/)
    expect(usage.code).toBe(1)
    expect(usage.stderr).toContain("must be written <account>/<agent>")
    expect(unknown.code).toBe(1)
    expect(unreachable.code).toBe(7)
    expect(unreachable.stderr).toMatch(/\(network_error\)/)
  }, timeout)

  it("accounts and conversations: get, list, title", async () => {
    const sent = await runCli(["chat", "send", "dep-1", "a title to change", "--json"], alice())
    const conversation = JSON.parse(sent.stdout).conversation_id
    const [account, titled] = await Promise.all([
      runCli(["accounts", "get", "acme", "--json"], alice()),
      runCli(["chat", "title", "dep-1", conversation, "Renamed 👍🏽"], alice())
    ])
    expect(JSON.parse(account.stdout)).toMatchObject({ name: "acme", role: "owner", members: expect.arrayContaining([expect.objectContaining({ user_id: "bob" })]) })
    expect(titled).toMatchObject({ code: 0, stdout: `Conversation ${conversation} is titled "Renamed 👍🏽".\n` })
    const listed = await runCli(["chat", "list", "dep-1"], alice())
    expect(listed.stdout).toMatch(new RegExp(`${conversation}\\s+\\S+\\s+no\\s+Renamed 👍🏽`))
  }, timeout)

  it("accounts: create, members list, set and remove, with the errors a user sees", async () => {
    const bob = () => as("bob-token")
    const created = await runCli(["accounts", "create", "bobs-lab"], bob())
    expect(created).toMatchObject({ code: 0, stdout: "Created account bobs-lab; you are its owner.\n" })
    const taken = await runCli(["accounts", "create", "acme"], bob())
    expect(taken.code).not.toBe(0)
    expect(taken.stderr).toContain("account_name_taken")
    const added = await runCli(["accounts", "members", "set", "bobs-lab", "alice", "--role", "admin"], bob())
    expect(added).toMatchObject({ code: 0, stdout: "Added Alice (alice) to bobs-lab as admin.\n" })
    const listed = await runCli(["accounts", "members", "list", "bobs-lab", "--json"], alice())
    expect(JSON.parse(listed.stdout)).toEqual([
      { user_id: "alice", name: "Alice", role: "admin" },
      { user_id: "bob", name: "Bob", role: "owner" }
    ])
    const table = await runCli(["accounts", "members", "list", "bobs-lab"], alice())
    expect(table.stdout).toMatch(/^MEMBER\s+NAME\s+ROLE\n/)
    const lastOwner = await runCli(["accounts", "members", "remove", "bobs-lab", "bob"], bob())
    expect(lastOwner.code).not.toBe(0)
    expect(lastOwner.stderr).toContain("last_owner")
    const badRole = await runCli(["accounts", "members", "set", "bobs-lab", "alice", "--role", "king"], bob())
    expect(badRole.code).not.toBe(0)
    const left = await runCli(["accounts", "members", "remove", "bobs-lab", "alice"], alice())
    expect(left).toMatchObject({ code: 0, stdout: "Removed alice from bobs-lab.\n" })
    const unconfirmed = await runCli(["accounts", "delete", "bobs-lab"], bob())
    expect(unconfirmed.code).toBe(1)
    expect(unconfirmed.stderr).toContain("--yes")
    const deleted = await runCli(["accounts", "delete", "bobs-lab", "--yes"], bob())
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toContain("Account bobs-lab deleted")
    expect((await runCli(["accounts", "get", "bobs-lab"], bob())).stderr).toContain("account_not_found")
  }, timeout)

  it("accounts: invite prints a link, invitations list and withdraw, accept takes the link or the code", async () => {
    const made = await runCli(["accounts", "invite", "acme", "--role", "member", "--email", "carol@example.com", "--json"], alice())
    expect(made.code, made.stderr).toBe(0)
    const invitation = JSON.parse(made.stdout) as { id: string; code: string; url: string }
    expect(invitation.url).toContain(`/invitations/${invitation.code}`)
    const listed = await runCli(["accounts", "invitations", "list", "acme"], alice())
    expect(listed.stdout).toMatch(/^ID\s+ROLE\s+EMAIL\s+BY\s+EXPIRES\n/)
    expect(listed.stdout).toContain("carol@example.com")
    // bob is a member already: refused, and the invitation stays.
    const already = await runCli(["accounts", "accept", invitation.url], as("bob-token"))
    expect(already.code).not.toBe(0)
    expect(already.stderr).toContain("already_member")
    const withdrawn = await runCli(["accounts", "invitations", "withdraw", "acme", invitation.id], alice())
    expect(withdrawn).toMatchObject({ code: 0, stdout: `Withdrew invitation ${invitation.id} to acme.\n` })
    const gone = await runCli(["accounts", "accept", invitation.code], as("bob-token"))
    expect(gone.stderr).toContain("invitation_not_found")
    const audit = await runCli(["accounts", "audit", "acme", "--limit", "2"], alice())
    expect(audit.stdout).toMatch(/^WHEN\s+WHO\s+ACTION\s+DETAILS\n/)
    expect(audit.stdout).toContain("invitation.withdrawn")
    expect(audit.stdout).toContain("invitation.created")
  }, timeout)

  it("tokens: create prints the secret once, list shows scopes and last use, a read token is refused a write, revoke ends it", async () => {
    const made = await runCli(["tokens", "create", "ci", "--scope", "read", "--account", "acme", "--expires-in-days", "7"], alice())
    expect(made.code, made.stderr).toBe(0)
    const secret = made.stdout.trim()
    expect(secret).toMatch(/^hst_[0-9A-Za-z]{38}$/)
    expect(made.stderr).toContain("shown only now")
    const me = await runCli(["me", "--json"], as(secret))
    expect(JSON.parse(me.stdout).accounts).toEqual([{ name: "acme", role: "owner" }])
    const refused = await runCli(["accounts", "create", "from-a-read-token"], as(secret))
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("insufficient_scope")
    const listed = JSON.parse((await runCli(["tokens", "list", "--json"], alice())).stdout) as Array<Record<string, unknown>>
    const entry = listed.find((t) => t["name"] === "ci")!
    expect(entry).toMatchObject({ scopes: ["read"], accounts: ["acme"] })
    expect(entry["last_used_at"]).not.toBeNull()
    expect(JSON.stringify(listed)).not.toContain(secret)
    const table = await runCli(["tokens", "list"], alice())
    expect(table.stdout).toMatch(/^ID\s+NAME\s+SCOPES\s+ACCOUNTS\s+EXPIRES\s+LAST USED\n/)
    const revoked = await runCli(["tokens", "revoke", String(entry["id"])], alice())
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked token ${entry["id"]}.\n` })
    expect((await runCli(["me"], as(secret))).code).not.toBe(0)
  }, timeout)

  it("setup: the first user of an empty instance, signed in in the profile; a second setup is refused", async () => {
    const empty = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_OBJECT_STORE: "memory:", HOSTING_DASHBOARD: "off" })
    try {
      const code = /setup: {3}(\S+)/.exec(empty.output())![1]!
      const fresh = { configDir: join(dir, "setup-config"), env: { HOSTING_BASE_URL: empty.baseUrl } }
      const wrong = await runCli(["setup", "--code", "AAAAA-BBBBB-CCCCC-DDDDD", "--user", "root"], fresh)
      expect(wrong.code).not.toBe(0)
      expect(wrong.stderr).toContain("invalid_setup_code")
      const made = await runCli(["setup", "--code", code, "--user", "root", "--name", "Root"], fresh)
      expect(made.code, made.stderr).toBe(0)
      expect(made.stdout).toContain("you are Root (root)")
      // The token went into the profile: the next command is signed in.
      const me = await runCli(["me", "--json"], fresh)
      expect(JSON.parse(me.stdout).user).toEqual({ id: "root", name: "Root" })
      const again = await runCli(["setup", "--code", code, "--user", "other"], fresh)
      expect(again.stderr).toContain("setup_done")
    } finally {
      await empty.stop()
    }
  }, timeout)

  it("secrets: set from stdin, a file or --value, list shows names never values, delete; members may list, not set", async () => {
    const value = `sk-${"x".repeat(8)}-${Date.now()}`
    const fromStdin = await runCli(["secrets", "set", "OPENAI_KEY", "--account", "acme"], { ...alice(), input: `${value}\n` })
    expect(fromStdin.code, fromStdin.stderr).toBe(0)
    expect(fromStdin.stdout).toContain("Created the secret OPENAI_KEY of acme.")
    const file = join(dir, "pem.txt")
    writeFileSync(file, "-----BEGIN KEY-----\nabc\n-----END KEY-----\n")
    // With one account, --account may be left out.
    const fromFile = await runCli(["secrets", "set", "A_PEM", "--from-file", file], alice())
    expect(fromFile.code, fromFile.stderr).toBe(0)
    const fromOption = await runCli(["secrets", "set", "OPENAI_KEY", "--value", `${value}-2`, "--json"], alice())
    expect(JSON.parse(fromOption.stdout)).toMatchObject({ name: "OPENAI_KEY", created: false })

    const listed = await runCli(["secrets", "list", "--account", "acme"], as("bob-token"))
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/^SECRET\s+CREATED\s+UPDATED\n/)
    expect(listed.stdout).toMatch(/^A_PEM\s/m)
    expect(listed.stdout).toMatch(/^OPENAI_KEY\s/m)
    expect(JSON.stringify([fromStdin, fromFile, fromOption, listed])).not.toContain(value)

    const refused = await runCli(["secrets", "set", "OPENAI_KEY", "--account", "acme", "--value", "x"], as("bob-token"))
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("forbidden")
    const badName = await runCli(["secrets", "set", "lower", "--account", "acme", "--value", "x"], alice())
    expect(badName.code).toBe(1)
    expect(badName.stderr.split("\n")[0]).toBe(
      'error: <name> "lower" must be 1-128 upper-case letters, digits or underscores, not starting with a digit (like API_KEY) (invalid_argument)'
    )
    const empty = await runCli(["secrets", "set", "EMPTY", "--account", "acme"], { ...alice(), input: "\n" })
    expect(empty.code).toBe(1)

    const deleted = await runCli(["secrets", "delete", "A_PEM", "--account", "acme"], alice())
    expect(deleted.code, deleted.stderr).toBe(0)
    const again = await runCli(["secrets", "delete", "A_PEM", "--account", "acme"], alice())
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain("secret_not_found")
  }, timeout)

  it("releases: yank and unyank a version, set and list channels, deploy a range that follows and rolls forward (issue 28)", async () => {
    const spec = join(dir, "scout.yaml")
    writeFileSync(spec, "name: scout\ndescription: Finds things\n")
    for (const [build, version] of [["b-1", "1.0.0"], ["b-2", "1.1.0"]] as const) {
      expect((await runCli(["agents", "register", "acme/scout", "--build-id", build, "--registry", "ghcr.io/acme", "--spec", spec], alice())).code).toBe(0)
      expect((await runCli(["agents", "publish", `acme/scout@${version}`, "--build-id", build], alice())).code).toBe(0)
    }
    const yanked = await runCli(["agents", "yank", "acme/scout@1.1.0", "--reason", "leaks memory"], alice())
    expect(yanked).toMatchObject({ code: 0 })
    expect(yanked.stdout.split("\n")[0]).toBe("acme/scout@1.1.0 (build b-2) is yanked: leaks memory")
    const set = await runCli(["agents", "channels", "set", "acme/scout@1.0.0", "stable"], alice())
    expect(set).toMatchObject({ code: 0, stdout: "Channel stable of acme/scout names 1.0.0 (build b-1).\n" })
    const refused = await runCli(["agents", "channels", "set", "acme/scout@1.1.0", "beta"], alice())
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("version_yanked")
    const listed = await runCli(["agents", "channels", "list", "acme/scout"], as())
    expect(listed.stdout).toMatch(/^CHANNEL\s+VERSION\s+BUILD\s+UPDATED\s+YANKED\n/)
    expect(listed.stdout).toMatch(/^latest\s+1\.0\.0\s+b-1\s+\(implicit\)/m)
    expect(listed.stdout).toMatch(/^stable\s+1\.0\.0\s+b-1\s/m)
    // A range skips the yanked 1.1.0 and, followed, moves to it once the yank is undone.
    const created = await runCli(["deployments", "create", "acme/scout@^1", "--follow"], alice())
    expect(created.code, created.stderr).toBe(0)
    const made = /^Deployed acme\/scout build b-1 as (dep-\S+), following its range \^1\.$/m.exec(created.stdout)
    expect(made, created.stdout).not.toBeNull()
    expect((await runCli(["agents", "unyank", "acme/scout@1.1.0"], alice())).stdout).toBe("acme/scout@1.1.0 (build b-2) is not yanked.\n")
    const history = JSON.parse((await runCli(["deployments", "history", "acme/scout", "--json"], alice())).stdout)
    expect(history.deployments[0]).toMatchObject({ build_id: "b-2", follow: { range: "^1" }, rolled_forward_from: made![1] })
    expect(history.deployments[1]).toMatchObject({ id: made![1], status: "superseded" })
  }, timeout * 2)

  // Last: deploying the agent again ends the fixtures' dep-1, which the tests above use.
  it("deployments: create, history, configmap, restart, rollback and delete", async () => {
    const created = await runCli(["deployments", "create", "acme/helper@1.0.0", "--json"], alice())
    expect(created.code).toBe(0)
    const deployment = JSON.parse(created.stdout)
    expect(deployment).toMatchObject({ account: "acme", agent: "acme/helper", build_id: "b-1", undeployed_at: null })
    const history = await runCli(["deployments", "history", "acme/helper"], alice())
    expect(history.stdout).toContain(deployment.id)
    const configMap = await runCli(["deployments", "configmap", "acme-helper", "helper-env", "--account", "acme", "--json"], alice())
    expect(JSON.parse(configMap.stdout)).toMatchObject({ name: "helper-env", data: { K: "V" } })
    const restarted = await runCli(["deployments", "restart", "acme-helper", "helper-0", "--account", "acme"], alice())
    expect(restarted.code).toBe(0)
    // dep-1 ran the same build: nothing to roll back to, said in the error form; a build of the history is fine.
    const nothing = await runCli(["deployments", "rollback", deployment.id], alice())
    expect(nothing.code).not.toBe(0)
    expect(nothing.stderr).toContain("nothing_to_roll_back")
    const back = await runCli(["deployments", "rollback", deployment.id, "--build-id", "b-1"], alice())
    expect(back.code, back.stderr).toBe(0)
    const rolled = /^Rolled (\S+) back to build b-1 as (dep-\S+)\.$/m.exec(back.stdout)
    expect(rolled?.[1]).toBe(deployment.id)
    expect(back.stdout).toMatch(new RegExp(`^rolled back from:\\s+${deployment.id}$`, "m"))
    // A live deployment links its A2A agent card (docs/protocols.md), in the detail and in --json.
    expect(back.stdout).toMatch(new RegExp(`^a2a card:\\s+http://\\S+/api/v1/deployments/${rolled![2]}/a2a/\\.well-known/agent-card\\.json$`, "m"))
    expect(deployment.links.a2a_card).toMatch(new RegExp(`/api/v1/deployments/${deployment.id}/a2a/\\.well-known/agent-card\\.json$`))
    // And its MCP server.
    expect(back.stdout).toMatch(new RegExp(`^mcp:\\s+http://\\S+/api/v1/deployments/${rolled![2]}/mcp$`, "m"))
    expect(deployment.links.mcp).toMatch(new RegExp(`/api/v1/deployments/${deployment.id}/mcp$`))
    // Env over the spec's: a plain value and a secret of the deploying account (set by the secrets test); a missing one is 409.
    const missing = await runCli(["deployments", "create", "acme/helper@1.0.0", "--env-secret", "KEY=NOT_SET"], alice())
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain("secret_missing")
    const badEnv = await runCli(["deployments", "create", "acme/helper@1.0.0", "--env", "no-equals"], alice())
    expect(badEnv.code).toBe(1)
    const withEnv = await runCli(["deployments", "create", "acme/helper@1.0.0", "--env", "MODE=slow", "--env-secret", "API_KEY=OPENAI_KEY"], alice())
    expect(withEnv.code, withEnv.stderr).toBe(0)
    expect(withEnv.stdout).toMatch(/^env:\s+MODE=slow API_KEY=\(secret OPENAI_KEY\)$/m)
    const badVersion = await runCli(["deployments", "rollback", deployment.id, "--to-version", "one"], alice())
    expect(badVersion.code).not.toBe(0)
    expect(badVersion.stderr).toContain("version")
    const removed = await runCli(["deployments", "delete", rolled![2]!, "--json"], alice())
    expect(JSON.parse(removed.stdout)).toMatchObject({ id: rolled![2], undeployed_at: expect.any(String) })

    const renamed = await runCli(["accounts", "rename", "acme", "acme-labs"], alice())
    expect(renamed).toMatchObject({ code: 0, stdout: "Renamed acme to acme-labs.\n" })
    expect(JSON.parse((await runCli(["me", "--json"], alice())).stdout).accounts).toEqual([{ name: "acme-labs", role: "owner" }])
  }, timeout)
})
