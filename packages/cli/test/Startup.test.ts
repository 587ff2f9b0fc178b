/**
 * The start of the built `hosting` (issue 31): help and completion scripts
 * answer from the pages the build rendered from the command tree, byte for
 * byte what the commands print, without loading them; anything else goes
 * the full way. CI builds before it tests; the built CLI is packages/cli/dist.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { runCli } from "./cli.js"

const timeout = 90_000
const dist = fileURLToPath(new URL("../dist/", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "hosting-cli-start-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs the built `hosting <args>`, on a terminal of its own (util-linux `script`) when `terminal`. */
const built = (args: ReadonlyArray<string>, terminal = false, env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const options = { env: { ...process.env, HOSTING_CONFIG_DIR: join(dir, "config"), NO_COLOR: "", ...env } }
    const done = (error: { code?: unknown } | null, stdout: string, stderr: string) =>
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr })
    if (terminal) {
      const command = ["node", join(dist, "bin.js"), ...args].map((a) => `'${a}'`).join(" ")
      execFile("script", ["-qec", command, "/dev/null"], options, done)
    } else {
      execFile(process.execPath, [join(dist, "bin.js"), ...args], options, done)
    }
  })

describe("hosting start-up (issue 31)", () => {
  it("the build renders a help page for every command and a completion script for every shell", () => {
    const pages = JSON.parse(readFileSync(join(dist, "help.json"), "utf8"))
    for (const path of ["", "chat", "chat send", "chat cancel", "deployments list", "accounts members set"]) {
      expect(pages.help[path], path).toMatch(/^[\s\S]*USAGE[\s\S]*\$ hosting/)
    }
    expect(Object.keys(pages.completions).sort()).toEqual(["bash", "fish", "sh", "zsh"])
  })

  it("help and completion scripts of the built CLI are byte for byte those the commands print", async () => {
    const local = { configDir: join(dir, "config"), env: { NO_COLOR: "1" } }
    for (const args of [["--help"], ["chat", "send", "--help"], ["deployments", "-h"], ["--completions", "zsh"]]) {
      const [fast, full] = await Promise.all([built(args, false, { NO_COLOR: "1" }), runCli(args, local, 60_000)])
      expect(full.code).toBe(0)
      expect(fast, args.join(" ")).toEqual({ code: 0, stdout: full.stdout, stderr: "" })
    }
  }, timeout)

  it("on a terminal the help's headers are bold, as the full CLI makes them; NO_COLOR keeps them plain", async () => {
    const [colored, plain] = await Promise.all([built(["chat", "send", "--help"], true), built(["chat", "send", "--help"], true, { NO_COLOR: "1" })])
    expect(colored.stdout).toMatch(/\u001b\[1mUSAGE\u001b\[0m/)
    expect(colored.stdout).toMatch(/\u001b\[1mGLOBAL OPTIONS\u001b\[0m/)
    expect(plain.stdout).toContain("USAGE")
    expect(plain.stdout).not.toMatch(/\u001b\[/)
  }, timeout)

  it("a help request the pages do not hold goes the full way: a misspelt command is still an error with a suggestion", async () => {
    expect(await built(["chat", "sen", "--help"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: unknown command "sen" for "hosting chat"; did you mean "send"? (unknown_command)')
    })
  }, timeout)
})

// The tests above need the build; say so rather than fail on a missing file.
if (!existsSync(join(dist, "help.json"))) throw new Error("packages/cli/dist/help.json is missing: run `pnpm run build` first")
