import { SqliteStorage } from "@hosting/storage-sqlite"
import { A2aTaskStoreSuite, StorageSuite } from "@hosting/testing"

StorageSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
A2aTaskStoreSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
