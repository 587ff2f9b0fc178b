import { defineConfig } from "vitest/config"

// Workspace packages are read from source through the "@hosting/source"
// export condition, so tests never need a build first.
export default defineConfig({
  resolve: { conditions: ["@hosting/source"] },
  ssr: { resolve: { conditions: ["@hosting/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "scripts/**/*.test.ts"],
    testTimeout: 30_000,
    // Memory assertions (streams released after disconnect) collect garbage first.
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
    hookTimeout: 30_000
  }
})
