/** A second send while a reply streams (ConcurrentSendSuite, issue 28) on SQLite, as one server process runs it. */
import { SqliteStorage } from "@hosting/storage-sqlite"
import { ConcurrentSendSuite } from "@hosting/testing"

ConcurrentSendSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
