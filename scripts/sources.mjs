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

/** True when a package's `src` is newer than `builtFile` (its own build when not given), or nothing is built. */
export const isStale = (dir, builtFile = builtFileOf(dir)) => {
  const src = join(dir, "src")
  if (!existsSync(src)) return false
  return !existsSync(builtFile) || newest(src) > statSync(builtFile).mtimeMs
}
