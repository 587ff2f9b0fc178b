import { defineConfig } from "tsup"

/**
 * Native modules and the large client libraries of optional adapters stay
 * outside the bundle (they are dependencies of this package, so they
 * resolve from dist/), and so does OpenTelemetry's SDK, loaded only when the
 * server exports its traces. `@effect/opentelemetry` is bundled: it must
 * share the bundle's copy of Effect.
 */
const external = /^(better-sqlite3|pg(-[a-z-]+)?|@kubernetes\/client-node|@aws-sdk\/[a-z0-9-]+|@opentelemetry\/[a-z0-9-]+)(\/.*)?$/

/** Everything else is bundled (tsup would leave this package's dependencies outside, and `noExternal` wins over `external`). */
const bundled = new RegExp(`^(?!${external.source.slice(1)})`)

// Both builds write into dist/ at once, so neither cleans it: the build script does, before.
export default defineConfig([
  // The library entry, for embedders: modules as they are, dependencies imported.
  {
    entry: ["src/index.ts"],
    format: ["esm"],
    sourcemap: true,
    target: "node20"
  },
  // The server's entry, bundled with the Effect stack and the workspace's
  // packages: only what is used is loaded, from a few files (see
  // docs/decisions.md). Adapters that the configuration may name are
  // imported when named, from chunks of their own. The workspace's packages
  // are read from source (the `@hosting/source` condition), as the
  // dashboard's build does, so no package build is needed first.
  {
    entry: ["src/main.ts"],
    format: ["esm"],
    sourcemap: true,
    target: "node20",
    splitting: true,
    noExternal: [bundled],
    external: [external],
    // The workspace's chunk of tsup helpers is imported bare as well as by name; dropping the bare import is right.
    esbuildOptions: (options) => {
      options.conditions = ["@hosting/source"]
      options.logOverride = { "ignored-bare-import": "silent" }
      options.alias = { undici: "./build/no-undici.js" }
    },
    // Bundled CommonJS dependencies call `require`; an ES module has none of its own.
    banner: { js: "import { createRequire as __hostingRequire } from \"node:module\"; const require = __hostingRequire(import.meta.url);" }
  }
])
