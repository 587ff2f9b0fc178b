/**
 * The dependency rule check catches a core that imports a node: module or a
 * driver, a package that imports what it does not declare, and a published
 * package that would give an embedder a second copy of effect.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const script = fileURLToPath(new URL("./check-deps.mjs", import.meta.url))
const roots: Array<string> = []
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })))

const workspace = (files: Record<string, string>) => {
  const root = mkdtempSync(join(tmpdir(), "deps-"))
  roots.push(root)
  mkdirSync(join(root, "examples"))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return spawnSync(process.execPath, [script, root], { encoding: "utf8" })
}

const effectAsPeer = { peerDependencies: { effect: "^3.22.3" }, devDependencies: { effect: "3.22.4" } }

const core = (source: string) => ({
  "packages/core/package.json": JSON.stringify({ name: "@hosting/core", ...effectAsPeer }),
  "packages/core/src/index.ts": source
})

describe("dependency rule", () => {
  it("holds for this workspace", () => {
    const result = spawnSync(process.execPath, [script], { encoding: "utf8" })
    expect(result.status).toBe(0)
  })

  it("packages/core imports no node: module, driver or adapter", () => {
    for (const bad of ['import { readFile } from "node:fs"', 'import { SqlClient } from "@effect/sql"', 'export * from "@hosting/http"']) {
      const result = workspace(core(`import { Effect } from "effect"\n${bad}\n`))
      expect(result.status).toBe(1)
      expect(result.stderr).toContain("the core may not import")
    }
    expect(workspace(core('import { Effect } from "effect"\nimport * as S from "./S.js"\n')).status).toBe(0)
  })

  it("a package may import only what its package.json declares", () => {
    const result = workspace({
      "packages/thing/package.json": JSON.stringify({ name: "@hosting/thing", ...effectAsPeer }),
      "packages/thing/src/index.ts": 'import { Effect } from "effect"\nimport pg from "pg"\n'
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('imports "pg" but @hosting/thing does not declare it')
  })

  it("a published package takes effect and @effect/* as peers, pinned inside their range for our builds", () => {
    const thing = (pkg: object) =>
      workspace({
        "packages/thing/package.json": JSON.stringify({ name: "@hosting/thing", ...pkg }),
        "packages/thing/src/index.ts": 'import { Effect } from "effect"\n'
      })
    const asDependency = thing({ dependencies: { effect: "3.22.4" } })
    expect(asDependency.status).toBe(1)
    expect(asDependency.stderr).toContain('lists "effect" in dependencies')
    const outside = thing({ peerDependencies: { effect: "^3.22.3" }, devDependencies: { effect: "3.21.0" } })
    expect(outside.stderr).toContain("does not pin a version inside it")
    const unpinned = thing({ peerDependencies: { "@effect/platform": "^0.97.2", effect: "^3.22.3" }, devDependencies: { effect: "3.22.4" } })
    expect(unpinned.stderr).toContain('"@effect/platform" ^0.97.2 as a peer')
    const devOnly = thing({ devDependencies: { effect: "3.22.4" } })
    expect(devOnly.stderr).toContain("has only in devDependencies")
    expect(thing(effectAsPeer).status).toBe(0)
    expect(thing({ private: true, dependencies: { effect: "3.22.4" } }).status).toBe(0)
  })
})
