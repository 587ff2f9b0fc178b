// The core is built as one entry: every module is a namespace of @hosting/core,
// and its declarations are bundled whole, so that the namespaces (`Ports` and its
// port classes among them) keep their types. The rest is ../../tsup.package.ts.
import { defineConfig } from "tsup"
import base from "../../tsup.package.js"

export default defineConfig({ ...base, entry: ["src/index.ts"] })
