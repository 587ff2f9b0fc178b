#!/usr/bin/env node
// The dependency rule: the core knows no adapter. packages/core/src may import
// only effect, semver, yaml, @noble/hashes, uuid and its own modules; no node: module, no driver,
// no other @hosting package. Every package imports only what it declares.
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
    const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.devDependencies }))
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
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`dependency rule broken:\n${problems.map((p) => `  ${p}`).join("\n")}`)
  process.exit(1)
}
console.log("dependency rule holds: the core imports no adapter, driver or node: module; every import is declared")
