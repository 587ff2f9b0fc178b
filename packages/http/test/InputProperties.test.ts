/** The input properties of every route (InputProperties.ts) on in-memory storage. */
import * as InputProperties from "./InputProperties.js"

InputProperties.run("in-memory")
