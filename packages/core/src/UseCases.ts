/**
 * Every use case of the core as one Layer, for servers that want them all.
 */
import { Layer } from "effect"
import { Accounts } from "./Accounts.js"
import { Catalog } from "./Catalog.js"
import { Identity } from "./Identity.js"

/** Catalog, Accounts and Identity; needs the storage ports and an IdGenerator. */
export const layer = Layer.mergeAll(Catalog.Default, Accounts.Default, Identity.Default)
