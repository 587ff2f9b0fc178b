/**
 * The core use cases on in-memory storage: what use-case and HTTP tests run on.
 */
import { EventBus, Events, Ports, UseCases } from "@hosting/core"
import { Duration, Layer } from "effect"
import * as MemoryStorage from "./MemoryStorage.js"

/** Settings a test may change. */
export interface TestServicesOptions {
  readonly replayCap?: number
  readonly heartbeat?: Duration.DurationInput
}

/** Every use case, the in-process event bus and every storage port, in memory. */
export const make = (options: TestServicesOptions = {}) =>
  UseCases.layer.pipe(
    Layer.provideMerge(Layer.succeed(Events.EventsConfig, {
      replayCap: options.replayCap ?? 1000,
      heartbeat: Duration.decode(options.heartbeat ?? Duration.seconds(25)),
      retention: Duration.days(7)
    })),
    Layer.provideMerge(Ports.IdGeneratorRandom),
    Layer.provideMerge(EventBus.layerLocal),
    Layer.provideMerge(MemoryStorage.layer)
  )

/** The services with the default settings. */
export const layer = make()
