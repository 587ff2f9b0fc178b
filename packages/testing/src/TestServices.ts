/**
 * The core use cases on in-memory storage: what use-case and HTTP tests run on.
 */
import { EventBus, Ports, UseCases } from "@hosting/core"
import { Layer } from "effect"
import * as MemoryStorage from "./MemoryStorage.js"

/** Every use case, the in-process event bus and every storage port, in memory. */
export const layer = UseCases.layer.pipe(
  Layer.provideMerge(Ports.IdGeneratorRandom),
  Layer.provideMerge(EventBus.layerLocal),
  Layer.provideMerge(MemoryStorage.layer)
)
