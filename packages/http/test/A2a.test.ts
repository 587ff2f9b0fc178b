/** The A2A suite (A2aSuite.ts) on in-memory storage. */
import * as A2aSuite from "./A2aSuite.js"

A2aSuite.run("in-memory")
