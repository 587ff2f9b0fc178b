// The core's modules are entries in their folders (`@hosting/core/ports/Transactor`
// is what other packages' declarations name), built as ../../tsup.package.ts builds
// every package, but for the declarations: tsc writes those file by file
// (tsconfig.build.json), since a bundler of declarations turns the `Ports`
// namespace, re-exported from modules that are entries of their own, into values
// without their types.
import { defineConfig } from "tsup"
import base from "../../tsup.package.js"

export default defineConfig({ ...base, entry: ["src/**/*.ts", "!src/internal/**"], dts: false })
