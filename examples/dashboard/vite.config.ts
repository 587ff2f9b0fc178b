/**
 * Builds the dashboard into `dist/`, reading the workspace packages from
 * source (the `@hosting/source` condition), so no package build is needed
 * first. `vite` (dev) proxies `/api` to a running example server:
 * `HOSTING_API_ORIGIN`, default `http://127.0.0.1:8080`.
 */
import { fileURLToPath } from "node:url"
import { defaultClientConditions, defineConfig } from "vite"

const api = process.env["HOSTING_API_ORIGIN"] ?? "http://127.0.0.1:8080"
// The dev server's proxy must not buffer the event streams.
const proxy = { "/api": { target: api, changeOrigin: false, ws: false } }

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  resolve: { conditions: ["@hosting/source", ...defaultClientConditions] },
  server: { host: "127.0.0.1", port: 5173, strictPort: false, proxy },
  preview: { host: "127.0.0.1", port: 4173, proxy },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    reportCompressedSize: false
  }
})
