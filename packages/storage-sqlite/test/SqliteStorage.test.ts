import { SqliteStorage } from "@hosting/storage-sqlite"
import { A2aTaskStoreSuite, StorageSuite } from "@hosting/testing"
import { Layer } from "effect"

StorageSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
A2aTaskStoreSuite.run("sqlite (in memory)", SqliteStorage.layer({ filename: ":memory:" }))
// As the example server runs it: no tracer, so statements and transactions take the client's direct paths.
StorageSuite.run("sqlite (in memory), no tracer", SqliteStorage.layer({ filename: ":memory:" }).pipe(Layer.provideMerge(Layer.setTracerEnabled(false))))
