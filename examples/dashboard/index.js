// Where the built dashboard is: the example server serves the files of this
// folder at `/` when it exists (`HOSTING_DASHBOARD` picks another, `off` none).
import { fileURLToPath } from "node:url"

export const directory = fileURLToPath(new URL("./dist", import.meta.url))
