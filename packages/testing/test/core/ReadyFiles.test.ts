/** A ready file's bytes never change (ReadyFilesSuite), on the object store in memory. */
import { MemoryObjectStore, ReadyFilesSuite } from "@hosting/testing"

ReadyFilesSuite.run("memory", MemoryObjectStore.layer, { presigns: false })
