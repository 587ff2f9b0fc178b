import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/main.ts", "src/index.ts"],
  format: ["esm"],
  sourcemap: true,
  clean: true,
  target: "node20"
})
