/**
 * What a person sees at a terminal and in pipes (issue 31): a closed pipe
 * ends a command quietly, errors in one form, profiles that say what they
 * do, ids as people use them.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "../../../examples/server/test/process.js"
import { runCli, spawnCli } from "./cli.js"

// Each run of the binary starts Node and tsx: a few seconds on a small machine.
const timeout = 90_000

const dir = mkdtempSync(join(tmpdir(), "hosting-cli-terminal-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))

/** Runs `hosting <args> | <reader>` in bash, answering the CLI's own exit code and what the reader printed. */
const piped = (args: ReadonlyArray<string>, reader: string, env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const script = `node --import tsx --conditions=@hosting/source "$0" "$@" | ${reader}; exit \${PIPESTATUS[0]}`
    const child = execFile("bash", ["-c", script, bin, ...args], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { ...process.env, HOSTING_CONFIG_DIR: join(dir, "config"), ...env }
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
    child.stdin?.end()
  })

/** Runs `hosting <args>` on a terminal of its own (util-linux `script`), answering what the terminal showed. */
const terminalRun = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<string>((resolve) => {
    const command = ["node", "--import", "tsx", "--conditions=@hosting/source", bin, ...args].map((a) => `'${a}'`).join(" ")
    execFile("script", ["-qec", command, "/dev/null"], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { ...process.env, HOSTING_CONFIG_DIR: join(dir, "config"), NO_COLOR: "", ...env }
    }, (_error, stdout) => resolve(stdout))
  })

/** Whether a shell is installed (completion tests run in each one that is). */
const shellExists = (name: string) => ["/bin", "/usr/bin", "/usr/local/bin"].some((d) => existsSync(join(d, name)))

/** Runs a script in a shell, answering its stdout. */
const shell = (name: string, script: string) =>
  new Promise<string>((resolve, reject) =>
    execFile(name, name === "zsh" ? ["-f", "-c", script] : ["-c", script], (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${name}: ${error.message}\n${stderr}`))
    )
  )

describe("hosting at a terminal and in pipes (issue 31)", () => {
  let server: Running
  const alice = () => ({ configDir: join(dir, "config"), env: { HOSTING_BASE_URL: server.baseUrl, HOSTING_TOKEN: "alice-token" } })

  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off"
    }, 60_000)
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
  })

  it("a closed stdout ends the command quietly with exit 0 (`hosting me | head -1`)", async () => {
    const [closed, head] = await Promise.all([
      runCli(["me"], { ...alice(), stdout: "closed" }),
      piped(["me"], "head -1", alice().env)
    ])
    expect(closed).toMatchObject({ code: 0, stderr: "" })
    expect(head).toEqual({ code: 0, stdout: "user:   Alice (alice)\n", stderr: "" })
  }, timeout)
  it("every error the CLI finds itself reads `error: <sentence> (<code>)`, names the option or argument, and suggests at the level typed", async () => {
    const local = { configDir: join(dir, "config") }
    // Seven starts at once on a small machine: more time than one needs.
    const run = (args: ReadonlyArray<string>) => runCli(args, local, 120_000)
    const [subcommand, option, time, choice, agent, required, extra] = await Promise.all([
      run(["chat", "rename", "x"]),
      run(["agents", "list", "--limt", "5"]),
      run(["traces", "list", "acme/helper", "--start", "yesterday"]),
      run(["traces", "list", "acme/helper", "--status", "bad"]),
      run(["agents", "get", "acme/helper@1.0.0x/y"]),
      run(["agents", "publish", "acme/helper@1.0.0"]),
      run(["me", "extra"])
    ])
    expect(subcommand).toEqual({
      code: 1,
      stdout: "",
      stderr: 'error: unknown command "rename" for "hosting chat" (unknown_command)\n' +
        "hint: the commands of hosting chat are list, send, title, history, cancel\n"
    })
    expect(option.stderr).toBe(
      'error: unknown option --limt for "hosting agents list"; did you mean --limit? (unknown_option)\n' +
        "hint: see `hosting agents list --help` for its options\n"
    )
    expect(time.stderr).toBe(
      'error: --start "yesterday" must be an RFC 3339 date-time such as 2026-11-01T10:00:00Z (invalid_value)\n' +
        "hint: see `hosting traces list --help`\n"
    )
    expect(choice.stderr).toBe('error: --status must be one of ok, error, not "bad" (invalid_value)\n')
    expect(agent.stderr.split("\n")[0]).toBe(
      'error: <account/agent>: agent "acme/helper@1.0.0x/y" must be written <account>/<agent>, e.g. acme/helper (invalid_argument)'
    )
    expect(required.stderr.split("\n")[0]).toBe('error: "hosting agents publish" needs the option --build-id (missing_option)')
    expect(extra.stderr.split("\n")[0]).toBe('error: unexpected argument "extra" for "hosting me" (unexpected_argument)')
    for (const result of [subcommand, option, time, choice, agent, required, extra]) expect(result.code).toBe(1)
  }, timeout * 2)

  it("whoami prints the identity line of `me`", async () => {
    const [line, json] = await Promise.all([runCli(["whoami"], alice()), runCli(["whoami", "--json"], alice())])
    expect(line).toEqual({ code: 0, stdout: "Alice (alice)\n", stderr: "" })
    expect(JSON.parse(json.stdout)).toEqual({ id: "alice", name: "Alice" })
  }, timeout)
  it("profiles: an unknown --profile is refused with a pointer to login; signed out says where", async () => {
    const fresh = { configDir: join(dir, "no-profiles"), env: { HOSTING_BASE_URL: server.baseUrl } }
    const [unknown, signedOut] = await Promise.all([runCli(["me", "--profile", "work"], fresh), runCli(["whoami"], fresh)])
    expect(unknown).toEqual({
      code: 1,
      stdout: "",
      stderr: 'error: there is no profile "work" (profile_not_found)\n' +
        "hint: create it by signing in: hosting login --profile work --base-url <url>\n"
    })
    expect(signedOut).toEqual({
      code: 2,
      stdout: "",
      stderr: `error: not signed in to ${server.baseUrl} (unauthorized)\n` +
        "hint: sign in with `hosting login`, or pass --token / set HOSTING_TOKEN\n"
    })
  }, timeout)
  it("ids: files download takes the name files list shows, conversations take a prefix, events follow shows ids", async () => {
    const source = join(dir, "report.csv")
    writeFileSync(source, "a,b\n1,2\n")
    expect((await runCli(["files", "upload", "dep-1", source], alice())).code).toBe(0)
    const byName = await runCli(["files", "download", "dep-1", "report.csv", "-o", "-"], alice())
    expect(byName).toMatchObject({ code: 0, stdout: "a,b\n1,2\n" })

    const sent = JSON.parse((await runCli(["chat", "send", "dep-1", "hello there", "--json"], alice())).stdout)
    const history = await runCli(["chat", "history", "dep-1", sent.conversation_id.slice(0, 8)], alice())
    expect(history.code, history.stderr).toBe(0)
    expect(history.stdout).toMatch(/^\S+ user: hello there\n/)
    const none = await runCli(["chat", "history", "dep-1", "0000"], alice())
    expect(none).toMatchObject({ code: 4, stderr: "error: no conversation of dep-1 starts with 0000 (conversation_not_found)\n" })

    const follow = spawnCli(["events", "follow", "acme"], alice())
    await follow.waitFor(/^connected$/m, 60_000)
    const spec = join(dir, "helper.yaml")
    writeFileSync(spec, "name: helper\ndescription: Answers questions\n")
    expect((await runCli(["agents", "register", "acme/helper", "--build-id", "b-1", "--registry", "ghcr.io/acme", "--spec", spec], alice())).code)
      .toBe(0)
    const [line] = await follow.waitFor(/^\S+ agent\.build acme\/helper b-1 .*$/m, 60_000)
    expect(line).toMatch(/ \(id [^)]+\)$/)
    follow.child.kill("SIGINT")
    expect((await follow.result(20_000)).code).toBe(0)
  }, timeout * 2)

  it("help: plain when piped or with NO_COLOR, the full command path, real descriptions, global options, examples, no --wizard", async () => {
    const local = { configDir: join(dir, "config") }
    const [piped, terminal, noColor] = await Promise.all([
      runCli(["chat", "send", "--help"], local, 60_000),
      // `script` gives the command a terminal.
      terminalRun(["chat", "send", "--help"], {}),
      terminalRun(["chat", "send", "--help"], { NO_COLOR: "1" })
    ])
    expect(piped.code).toBe(0)
    const help = piped.stdout
    expect(help).not.toMatch(/\u001b\[/)
    expect(help.split("\n")).toContain(
      "$ hosting chat send [(-c, --conversation text)] --attach text... [--client-message-id text] " +
        "[--concurrent-send reject | queue | interrupt] <deployment> [<message>]"
    )
    expect(help).not.toContain("A user-defined piece of text.")
    expect(help).not.toContain("--wizard")
    expect(help).toContain("\nGLOBAL OPTIONS\n\n--json\n  Print machine-readable JSON on stdout\n")
    expect(help).toMatch(/^--token text$/m)
    expect(help).toMatch(/^--profile text$/m)
    expect(help.slice(help.indexOf("\nEXAMPLES\n"))).toBe(
      "\nEXAMPLES\n\n" +
        '  $ hosting chat send dep-1 "Summarise the report"\n' +
        '  $ hosting chat send dep-1 "And the totals?" --conversation <id>\n' +
        '  $ echo "long text" | hosting chat send dep-1 -\n\n'
    )
    expect(terminal).toMatch(/\u001b\[1mUSAGE\u001b\[0m/)
    expect(noColor).toContain("USAGE")
    expect(noColor).not.toMatch(/\u001b\[/)
  }, timeout)

  it("completion: bash, fish and zsh complete to the leaves (options, choices, global options)", async () => {
    const local = { configDir: join(dir, "config") }
    const [bash, fish, zsh] = await Promise.all(["bash", "fish", "zsh"].map((shell) => runCli(["--completions", shell], local, 60_000)))
    const scripts = { bash: join(dir, "hosting.bash"), fish: join(dir, "hosting.fish"), zsh: join(dir, "hosting.zsh") }
    writeFileSync(scripts.bash, bash!.stdout)
    writeFileSync(scripts.fish, fish!.stdout)
    writeFileSync(scripts.zsh, zsh!.stdout)
    for (const script of [bash, fish, zsh]) expect(script!.stdout).not.toContain("wizard")

    if (shellExists("bash")) {
      /** What bash offers for the words, the last one being completed. */
      const offer = (...words: Array<string>) =>
        shell("bash", `source ${scripts.bash}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); ` +
          `COMP_CWORD=${words.length - 1}; _hosting_bash_completions hosting; printf '%s\\n' "\${COMPREPLY[@]}"`)
      expect(await offer("hosting", "agents", "list", "--li")).toBe("--limit\n")
      expect(await offer("hosting", "chat", "s")).toBe("send\n")
      expect(await offer("hosting", "traces", "list", "acme/helper", "--status", "")).toBe("ok\nerror\n")
      expect(await offer("hosting", "deployments", "history", "acme/helper", "--j")).toBe("--json\n")
    }
    if (shellExists("fish")) {
      const offer = (line: string) => shell("fish", `source ${scripts.fish}; complete -C '${line}'`)
      expect(await offer("hosting agents list --li")).toBe("--limit\tAgents per page, 1 to 200\n")
      expect(await offer("hosting chat s")).toBe("send\tSend a message and print the agent's reply as it streams\n")
      expect((await offer("hosting traces list acme/helper --status ")).split("\n").map((l) => l.split("\t")[0]).sort()).toEqual(["", "error", "ok"])
    }
    if (shellExists("zsh")) {
      let asked = 0
      /** What zsh offers, in a real interactive zsh on a pseudo-terminal, when Tab is pressed after `line`. */
      const offer = async (line: string) => {
        const out = join(dir, `zsh-offer-${++asked}`)
        await new Promise<void>((resolve, reject) =>
          execFile("zsh", ["-f", fileURLToPath(new URL("zsh-complete.zsh", import.meta.url)), scripts.zsh, out, line], (error, _stdout, stderr) =>
            error === null ? resolve() : reject(new Error(`zsh: ${error.message}\n${stderr}`))
          )
        )
        return existsSync(out) ? [...new Set(readFileSync(out, "utf8").trim().split("\n"))].sort() : []
      }
      expect(await offer("hosting agents list --li")).toEqual(["--limit"])
      expect(await offer("hosting chat s")).toEqual(["send"])
      expect(await offer("hosting traces list acme/helper --status ")).toEqual(["error", "ok"])
      expect(await offer("hosting deployments history acme/helper --j")).toEqual(["--json"])
      // Options that take a value take it: after `--limit 5` and `--profile work`, completion goes on.
      expect(await offer("hosting traces list --limit 5 --st")).toEqual(["--start", "--status"])
      expect(await offer("hosting --profile work cha")).toEqual(["chat"])
      expect(await offer("hosting chat send dep-1 --concurrent-send ")).toEqual(["interrupt", "queue", "reject"])
    }
  }, timeout * 2)

  // Last: deploying the agent again supersedes the fixtures' dep-1, which the tests above use.
  it("deployments create says what it superseded; the history's STATUS agrees with --json", async () => {
    expect((await runCli(["agents", "publish", "acme/helper@1.0.0", "--build-id", "b-1"], alice())).code).toBe(0)
    const created = await runCli(["deployments", "create", "acme/helper@1.0.0"], alice())
    expect(created.code, created.stderr).toBe(0)
    const lines = created.stdout.split("\n")
    expect(lines[0]).toMatch(/^Deployed acme\/helper build b-1 as dep-\S+\.$/)
    expect(lines[1]).toBe("Superseded dep-1 (build b-1).")
    const [table, json] = await Promise.all([
      runCli(["deployments", "history", "acme/helper"], alice()),
      runCli(["deployments", "history", "acme/helper", "--json"], alice())
    ])
    const statuses = JSON.parse(json.stdout).deployments.map((d: { id: string; status: string }) => `${d.id} ${d.status}`)
    expect(statuses).toContain("dep-1 superseded")
    const shown = table.stdout.trim().split("\n").slice(1).map((row) => row.split(/\s+/)).map((cells) => `${cells[0]} ${cells[4]}`)
    expect(shown).toEqual(statuses)
  }, timeout)
})
