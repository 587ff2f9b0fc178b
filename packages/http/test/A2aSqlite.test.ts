/** The A2A suite (A2aSuite.ts) on SQLite storage, in a database in memory. */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Layer } from "effect"
import * as A2aSuite from "./A2aSuite.js"

A2aSuite.run("SQLite", Layer.orDie(SqliteStorage.layer({ filename: ":memory:" })))
