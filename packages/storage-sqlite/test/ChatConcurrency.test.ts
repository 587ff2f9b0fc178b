/** Chat under concurrent sends and cancels (ChatSuite) on SQLite, as one server process runs it. */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { ChatSuite } from "@hosting/testing"

ChatSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
