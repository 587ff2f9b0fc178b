/**
 * The core use cases on in-memory storage: what use-case and HTTP tests run on.
 */
import { Ports, UseCases } from "@hosting/core"
import { Layer } from "effect"
import * as MemoryStorage from "./MemoryStorage.js"

/** Catalog, Accounts, Identity and every storage port, in memory. */
export const layer = UseCases.layer.pipe(
  Layer.provideMerge(Ports.IdGeneratorRandom),
  Layer.provideMerge(MemoryStorage.layer)
)
