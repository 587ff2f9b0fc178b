// Which workspace packages `pnpm start` builds, and which of them changed
// after their build: shared by `pnpm start` (scripts/start.mjs) and the
// benchmark runner (bench/).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("..", import.meta.url))

/** The example server's package, built with every workspace package it depends on. */
export const serverPackage = "@hosting/example-server"
/** The dashboard the server serves at `/`: a Vite app that reads the workspace packages from source. */
export const dashboardPackage = "@hosting/dashboard"

/** The workspace's packages (`packages/*`, `examples/*`) by name: their folder and workspace dependencies. */
export const workspacePackages = (top = root) => {
  const packages = new Map()
  for (const group of ["packages", "examples"]) {
    const folder = join(top, group)
    if (!existsSync(folder)) continue
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const manifest = join(folder, entry.name, "package.json")
      if (!entry.isDirectory() || !existsSync(manifest)) continue
      const json = JSON.parse(readFileSync(manifest, "utf8"))
      const deps = Object.entries({ ...json.dependencies, ...json.devDependencies })
        .filter(([, range]) => String(range).startsWith("workspace:"))
        .map(([name]) => name)
      packages.set(json.name, { dir: join(folder, entry.name), deps })
    }
  }
  return packages
}

/** `names` and every workspace package they depend on, directly or not. */
const withDependencies = (packages, names) => {
  const seen = new Set()
  const visit = (name) => {
    if (seen.has(name) || !packages.has(name)) return
    seen.add(name)
    packages.get(name).deps.forEach(visit)
  }
  names.forEach(visit)
  return seen
}

/**
 * What `pnpm start` builds: the server with its workspace dependencies, and
 * the dashboard. `filters` are pnpm's `--filter` arguments for exactly the
 * packages in `dirs`, so that what is checked for staleness is what is built.
 */
export const startPlan = (top = root) => {
  const packages = workspacePackages(top)
  const built = withDependencies(packages, [serverPackage])
  built.add(dashboardPackage)
  return {
    dirs: [...built].filter((name) => packages.has(name)).map((name) => packages.get(name).dir),
    filters: ["--filter", `${serverPackage}...`, "--filter", dashboardPackage]
  }
}

/** The folders `pnpm start` builds (see startPlan). */
export const serverDirs = (top = root) => startPlan(top).dirs

/** The newest modification time of any file below a folder. */
export const newest = (dir) => {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

/** A Vite app (an `index.html` at its root) rather than a library built by tsup. */
const isApp = (dir) => existsSync(join(dir, "index.html"))

/** The file a package's build writes last: `dist/index.html` for a Vite app, else `dist/index.js`. */
const builtFileOf = (dir) => join(dir, "dist", isApp(dir) ? "index.html" : "index.js")

/**
 * What a package's build reads: `src`; for a Vite app also its page, config
 * and public files, and the sources of the workspace packages it bundles.
 */
const inputsOf = (dir, top) => {
  const own = ["src", "index.html", "vite.config.ts", "public"].map((name) => join(dir, name))
  const packages = isApp(dir) ? workspacePackages(top) : new Map()
  const bundled = [...packages.values()].find((p) => p.dir === dir)?.deps ?? []
  const fromDeps = bundled.flatMap((name) => (packages.has(name) ? [join(packages.get(name).dir, "src")] : []))
  return [...own, ...fromDeps].filter((path) => existsSync(path))
}

const newestOf = (path) => (statSync(path).isDirectory() ? newest(path) : statSync(path).mtimeMs)

/** True when a package's inputs are newer than `builtFile` (its own build when not given), or nothing is built. */
export const isStale = (dir, builtFile = builtFileOf(dir), top = root) => {
  if (!existsSync(join(dir, "src"))) return false
  if (!existsSync(builtFile)) return true
  const built = statSync(builtFile).mtimeMs
  return inputsOf(dir, top).some((path) => newestOf(path) > built)
}
