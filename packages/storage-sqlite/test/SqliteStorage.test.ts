import { SqliteStorage } from "@hosting/storage-sqlite"
import { StorageSuite } from "@hosting/testing"

StorageSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
