/** The input properties of every route (InputProperties.ts) on SQLite storage, in a database in memory. */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Layer } from "effect"
import * as InputProperties from "./InputProperties.js"

InputProperties.run("SQLite", Layer.orDie(SqliteStorage.layer({ filename: ":memory:" })))
