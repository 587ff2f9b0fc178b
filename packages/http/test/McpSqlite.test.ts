/** The MCP suite (McpSuite.ts) on SQLite storage, in a database in memory. */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Layer } from "effect"
import * as McpSuite from "./McpSuite.js"

McpSuite.run("SQLite", Layer.orDie(SqliteStorage.layer({ filename: ":memory:" })))
