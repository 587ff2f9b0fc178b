import { defineConfig } from "tsup"

// The example server is bundled with the workspace packages read from source
// (the "@hosting/source" export condition), so `pnpm start` needs no prior
// build of the libraries; npm dependencies stay external.
export default defineConfig({
  entry: ["src/main.ts", "src/index.ts"],
  format: ["esm"],
  sourcemap: true,
  clean: true,
  target: "node20",
  noExternal: [/^@hosting\//],
  esbuildOptions(options) {
    options.conditions = ["@hosting/source"]
  }
})
