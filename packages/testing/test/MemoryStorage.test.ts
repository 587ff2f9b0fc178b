import { A2aTaskStoreSuite, MemoryA2aTaskStore, MemoryStorage, StorageSuite } from "@hosting/testing"

StorageSuite.run("memory", MemoryStorage.layer)
A2aTaskStoreSuite.run("memory", MemoryA2aTaskStore.layer)
