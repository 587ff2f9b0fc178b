// Which workspace sources changed after a build: shared by `pnpm start`
// (scripts/start.mjs) and the benchmark runner (bench/).
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("..", import.meta.url))

/** The packages the example server is built from, the dashboard it serves, and the server itself. */
export const serverDirs = () => [
  ...readdirSync(join(root, "packages")).map((d) => join(root, "packages", d)),
  join(root, "examples", "dashboard"),
  join(root, "examples", "server")
]

/** The newest modification time of any file below a folder. */
export const newest = (dir) => {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

/**
 * The file a package's build writes last: `dist/index.html` for a Vite app
 * (an `index.html` at its root), else `dist/index.js`.
 */
const builtFileOf = (dir) => join(dir, "dist", existsSync(join(dir, "index.html")) ? "index.html" : "index.js")

/** What a package's build reads: `src`, and for a Vite app also its page, config and public files. */
const inputsOf = (dir) =>
  ["src", "index.html", "vite.config.ts", "public"].map((name) => join(dir, name)).filter((path) => existsSync(path))

const newestOf = (path) => (statSync(path).isDirectory() ? newest(path) : statSync(path).mtimeMs)

/** True when a package's inputs are newer than `builtFile` (its own build when not given), or nothing is built. */
export const isStale = (dir, builtFile = builtFileOf(dir)) => {
  if (!existsSync(join(dir, "src"))) return false
  if (!existsSync(builtFile)) return true
  const built = statSync(builtFile).mtimeMs
  return inputsOf(dir).some((path) => newestOf(path) > built)
}
