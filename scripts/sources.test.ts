/**
 * `pnpm start` builds exactly what it checks for staleness (the server, its
 * workspace packages, the dashboard), so that a build leaves nothing stale
 * and the next start is immediate; the dashboard is rebuilt when a package
 * it bundles from source changes.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { isStale, root, serverDirs, startPlan } from "./sources.mjs"

const temps: Array<string> = []
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const write = (top: string, files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(top, path, ".."), { recursive: true })
    writeFileSync(join(top, path), text)
  }
}
const setTime = (path: string, seconds: number) => utimesSync(path, seconds, seconds)

describe("pnpm start: what it builds", () => {
  it("checks for staleness exactly the packages its build command builds, the dashboard among them", () => {
    const { filters } = startPlan() as { filters: Array<string> }
    const listed = spawnSync("npx", ["-y", "pnpm@10", "ls", "-r", "--depth", "-1", "--json", ...filters], {
      cwd: root,
      encoding: "utf8"
    })
    expect(listed.status, listed.stderr).toBe(0)
    const built = (JSON.parse(listed.stdout) as Array<{ path: string }>).map((p) => p.path).sort()
    const checked = (serverDirs() as Array<string>).map((dir) => dir.replace(/\/$/, "")).sort()
    expect(checked).toEqual(built)
    expect(checked).toContain(join(root, "examples", "dashboard"))
    expect(checked).toContain(join(root, "examples", "server"))
    expect(checked).not.toContain(join(root, "packages", "cli"))
  })

  it("a built dashboard is stale once a workspace package it bundles has newer sources, not before", () => {
    const top = mkdtempSync(join(tmpdir(), "sources-"))
    temps.push(top)
    write(top, {
      "packages/core/package.json": JSON.stringify({ name: "@x/core" }),
      "packages/core/src/index.ts": "export {}",
      "packages/other/package.json": JSON.stringify({ name: "@x/other" }),
      "packages/other/src/index.ts": "export {}",
      "examples/dashboard/package.json": JSON.stringify({ name: "@x/dashboard", dependencies: { "@x/core": "workspace:^" } }),
      "examples/dashboard/index.html": "<!doctype html>",
      "examples/dashboard/src/main.tsx": "",
      "examples/dashboard/dist/index.html": "<!doctype html>"
    })
    const dashboard = join(top, "examples", "dashboard")
    for (const path of ["packages/core/src/index.ts", "packages/core/src", "packages/other/src/index.ts", "examples/dashboard/index.html",
      "examples/dashboard/src/main.tsx", "examples/dashboard/src"]) setTime(join(top, path), 1_000)
    setTime(join(dashboard, "dist", "index.html"), 2_000)
    expect(isStale(dashboard, undefined, top)).toBe(false)
    setTime(join(top, "packages/other/src/index.ts"), 3_000)
    expect(isStale(dashboard, undefined, top)).toBe(false)
    setTime(join(top, "packages/core/src/index.ts"), 3_000)
    expect(isStale(dashboard, undefined, top)).toBe(true)
  })
})
