/** Deleting an account (DeleteAccount.ts) on the in-memory storage. */
import * as MemoryStorage from "@hosting/testing/MemoryStorage"
import * as DeleteAccount from "./DeleteAccount.js"

DeleteAccount.run("in-memory", MemoryStorage.layer)
