import { defineConfig } from "tsup"

/** The build of every library package: each module of src/ (in its folder; internal/ modules are bundled into the entries that import them) as an ESM entry, with declarations. */
export default defineConfig({
  entry: ["src/**/*.ts", "!src/**/internal/**"],
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20"
})
