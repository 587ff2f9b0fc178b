/**
 * The MCP SDK is loaded at the first MCP request, not with the server:
 * idle memory at start is a measured goal (docs/performance.md). A process
 * of its own imports every module of @hosting/http, the MCP handlers
 * included, while a resolve hook records each module of the SDK that is
 * asked for; none may be, until the process imports one itself (which the
 * hook must see, or it proves nothing).
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const httpPackage = fileURLToPath(new URL("..", import.meta.url))

const hooks = [
  "let port",
  "export async function initialize(data) { port = data.port }",
  "export async function resolve(specifier, context, next) {",
  "  const resolved = await next(specifier, context)",
  "  if (resolved.url.includes('@modelcontextprotocol')) port.postMessage(resolved.url)",
  "  return resolved",
  "}"
].join("\n")

const script = [
  "import { register } from 'node:module'",
  "import { MessageChannel } from 'node:worker_threads'",
  "const { port1, port2 } = new MessageChannel()",
  "const seen = []",
  "port1.on('message', (url) => seen.push(url))",
  `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { port: port2 }, transferList: [port2] })`,
  "const http = await import('@hosting/http')",
  "const served = typeof http.McpHttp.layerWith === 'function' && typeof http.HostingHttp.layer === 'function'",
  "await new Promise((resolve) => setTimeout(resolve, 100))",
  "const atStart = seen.length",
  "await import('@modelcontextprotocol/sdk/types.js')",
  "await new Promise((resolve) => setTimeout(resolve, 100))",
  "port1.close()",
  "process.stdout.write(JSON.stringify({ served, atStart, afterImport: seen.length }))"
].join("\n")

describe("the MCP SDK is loaded lazily (issue 29)", () => {
  it("importing @hosting/http, the MCP handlers included, loads no module of the SDK; the hook that watches sees one imported", () => {
    const run = spawnSync(process.execPath, ["--conditions=@hosting/source", "--import", "tsx", "--input-type=module", "--eval", script], {
      cwd: httpPackage,
      encoding: "utf8",
      timeout: 60_000
    })
    expect(run.status, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout) as { served: boolean; atStart: number; afterImport: number }
    expect(result.served).toBe(true)
    expect(result.atStart).toBe(0)
    expect(result.afterImport).toBeGreaterThan(0)
  }, 90_000)
})
