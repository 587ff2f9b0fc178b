import { MemoryObjectStore, ObjectStoreSuite } from "@hosting/testing"

ObjectStoreSuite.run("memory", MemoryObjectStore.layer)
