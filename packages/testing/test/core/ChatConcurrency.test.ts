/** Chat under concurrent sends and cancels (ChatSuite) on the in-memory storage. */
import { ChatSuite, MemoryStorage } from "@hosting/testing"

ChatSuite.run("memory", MemoryStorage.layer)
