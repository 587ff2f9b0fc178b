import { defineConfig } from "tsup"

/** The build of every library package: each module of src/ as an ESM entry, with declarations. */
export default defineConfig({
  entry: ["src/*.ts"],
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20"
})
