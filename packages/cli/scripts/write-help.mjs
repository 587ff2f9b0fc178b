// Writes dist/help.json, the help and completion pages the built `hosting` answers from without loading its
// commands (src/Startup.ts), rendered from the command tree by src/HelpPages.ts. Run by `build`, after tsup.
import { writeFileSync } from "node:fs"

// The pages are plain text; a terminal's colours are added when they are printed.
process.env.NO_COLOR = "1"
const [{ render }, { Effect }] = await Promise.all([import("../dist/HelpPages.js"), import("effect")])
const pages = await Effect.runPromise(render)
writeFileSync(new URL("../dist/help.json", import.meta.url), `${JSON.stringify(pages)}\n`)
console.log(`dist/help.json: ${Object.keys(pages.help).length} help pages, ${Object.keys(pages.completions).length} completion scripts`)
