// Lints the OpenAPI document that the server serves at /api/v1/openapi.json
// with Redocly CLI, under the rules of redocly.yaml. The document is
// generated from @hosting/api's sources (read through tsx and the
// @hosting/source condition, so no build is needed), written to a temporary
// file, and linted. Exits with the linter's status.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const apiPackage = join(root, "packages", "api")

// Run from the api package, so that its own dependencies (@effect/platform) resolve.
const generate = [
  "import { OpenApi } from \"@effect/platform\"",
  "import { HostingApi } from \"./src/index.ts\"",
  "process.stdout.write(JSON.stringify(OpenApi.fromApi(HostingApi.HostingApi), null, 2))"
].join("\n")

const generated = spawnSync(
  process.execPath,
  ["--conditions=@hosting/source", "--import", "tsx", "--input-type=module", "--eval", generate],
  { cwd: apiPackage, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }
)
if (generated.status !== 0) {
  process.stderr.write(generated.stderr)
  console.error("lint-openapi: could not generate the OpenAPI document")
  process.exit(generated.status ?? 1)
}

const dir = mkdtempSync(join(tmpdir(), "hosting-openapi-"))
const file = join(dir, "openapi.json")
try {
  writeFileSync(file, generated.stdout)
  const redocly = join(root, "node_modules", ".bin", process.platform === "win32" ? "redocly.cmd" : "redocly")
  const lint = spawnSync(redocly, ["lint", file, "--config", join(root, "redocly.yaml")], {
    stdio: "inherit",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
  })
  if (lint.error) throw lint.error
  process.exitCode = lint.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
