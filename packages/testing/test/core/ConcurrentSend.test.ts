/** A second send while a reply streams (ConcurrentSendSuite, issue 28) on the in-memory storage. */
import { ConcurrentSendSuite, MemoryStorage } from "@hosting/testing"

ConcurrentSendSuite.run("memory", MemoryStorage.layer)
