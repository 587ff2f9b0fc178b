import { MemoryStorage, StorageSuite } from "@hosting/testing"

StorageSuite.run("memory", MemoryStorage.layer)
