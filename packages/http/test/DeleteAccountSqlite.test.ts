/** Deleting an account (DeleteAccount.ts) on SQLite storage, in a database in memory. */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Layer } from "effect"
import * as DeleteAccount from "./DeleteAccount.js"

DeleteAccount.run("SQLite", Layer.orDie(SqliteStorage.layer({ filename: ":memory:" })))
