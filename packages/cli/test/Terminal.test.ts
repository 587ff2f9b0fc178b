/**
 * What a person sees at a terminal and in pipes (issue 31): a closed pipe
 * ends a command quietly, errors in one form, help without escapes.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "../../../examples/server/test/process.js"
import { runCli } from "./cli.js"

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
})
