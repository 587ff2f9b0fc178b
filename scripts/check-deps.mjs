#!/usr/bin/env node
// The dependency rule: the core knows no adapter. packages/core/src may import
// only effect, semver, yaml, @noble/hashes, uuid and its own modules; no node: module, no driver,
// no other @hosting package. Every package imports only what it declares.
// A published package (not private) takes effect and @effect/* as peer
// dependencies, never as dependencies, so that an embedder has one copy of
// each; it pins each of them in devDependencies, inside its peer range, for
// our own builds and tests; and its sources import nothing that is only a
// devDependency, since an embedder does not install those.
import { readFileSync, readdirSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

// The workspace root; a test passes another one to see the rule catch a breach.
const root = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url))
const coreAllowed = new Set(["effect", "semver", "yaml", "@noble/hashes", "uuid"])
const problems = []

const files = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

const importsOf = (file) => {
  const text = readFileSync(file, "utf8")
  const found = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
    found.push(m[1] ?? m[2])
  }
  return found
}

/** effect and the @effect/* packages: one copy each in an embedder's tree. */
const isEffect = (name) => name === "effect" || name.startsWith("@effect/")

/** Whether an exact version is inside a caret range (`^0.97.2`, `^3.22.3`), the only kind our peers use. */
const insideCaret = (version, range) => {
  const floor = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range)
  const exact = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)
  if (!floor || !exact) return false
  const [a, b] = [floor.slice(1).map(Number), exact.slice(1).map(Number)]
  const fixed = a[0] > 0 ? 1 : 2
  for (let i = 0; i < fixed; i++) if (a[i] !== b[i]) return false
  return b[0] * 1e12 + b[1] * 1e6 + b[2] >= a[0] * 1e12 + a[1] * 1e6 + a[2]
}

/** The peer rules of a published package's package.json. */
const peerProblems = (pkg, where) => {
  const found = []
  for (const name of Object.keys(pkg.dependencies ?? {}).filter(isEffect)) {
    found.push(`${where}: ${pkg.name} lists "${name}" in dependencies; effect and @effect/* are peerDependencies of a published package`)
  }
  for (const [name, range] of Object.entries(pkg.peerDependencies ?? {}).filter(([n]) => isEffect(n))) {
    const pinned = pkg.devDependencies?.[name]
    if (pinned === undefined || !insideCaret(pinned, range)) {
      found.push(`${where}: ${pkg.name} takes "${name}" ${range} as a peer but does not pin a version inside it in devDependencies (has ${pinned ?? "none"})`)
    }
  }
  return found
}

const packageName = (spec) => (spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0])

for (const group of ["packages", "examples"]) {
  for (const dir of readdirSync(join(root, group))) {
    const pkgDir = join(root, group, dir)
    let pkg
    try {
      pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"))
    } catch {
      continue
    }
    const published = pkg.private !== true
    const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.devDependencies }))
    const installed = new Set(Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies }))
    if (published) problems.push(...peerProblems(pkg, relative(root, join(pkgDir, "package.json"))))
    let srcFiles = []
    try {
      srcFiles = files(join(pkgDir, "src"))
    } catch {
      continue
    }
    for (const file of srcFiles) {
      for (const spec of importsOf(file)) {
        if (spec.startsWith(".")) continue
        const where = relative(root, file)
        if (pkg.name === "@hosting/core") {
          if (spec.startsWith("node:") || !coreAllowed.has(packageName(spec))) {
            problems.push(`${where}: the core may not import "${spec}" (allowed: ${[...coreAllowed].join(", ")})`)
          }
          continue
        }
        if (spec.startsWith("node:")) continue
        if (!declared.has(packageName(spec))) problems.push(`${where}: imports "${spec}" but ${pkg.name} does not declare it`)
        else if (published && !installed.has(packageName(spec))) {
          problems.push(`${where}: imports "${spec}", which ${pkg.name} has only in devDependencies; an embedder would not have it`)
        }
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`dependency rule broken:\n${problems.map((p) => `  ${p}`).join("\n")}`)
  process.exit(1)
}
console.log(
  "dependency rule holds: the core imports no adapter, driver or node: module; every import is declared; published packages take effect and @effect/* as peers"
)
