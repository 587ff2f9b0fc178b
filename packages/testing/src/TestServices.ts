/**
 * The core use cases on in-memory storage: what use-case and HTTP tests run on.
 */
import { type AgentRuntime, Chat, type Cluster, EventBus, Events, type ObjectStore, Ports, ReplyBus, Traces, UseCases } from "@hosting/core"
import { Duration, Layer } from "effect"
import * as EchoAgent from "./EchoAgent.js"
import * as FakeCluster from "./FakeCluster.js"
import * as MemoryObjectStore from "./MemoryObjectStore.js"
import * as MemoryStorage from "./MemoryStorage.js"

/** Settings a test may change. */
export interface TestServicesOptions {
  readonly replayCap?: number
  readonly heartbeat?: Duration.DurationInput
  /** Objects the fake cluster starts with. */
  readonly cluster?: FakeCluster.Seed
  /** Another Cluster instead of the fake one. */
  readonly clusterLayer?: Layer.Layer<Cluster.Cluster>
  /** The echo agent's settings. */
  readonly echo?: EchoAgent.EchoOptions
  /** Another agent runtime instead of the echo agent. */
  readonly agentLayer?: Layer.Layer<AgentRuntime.AgentRuntime>
  readonly messageLimit?: number
  readonly maxAttachments?: number
  /** Reply leases (default 30 s) and whether several processes share the storage (default false). */
  readonly leaseDuration?: Duration.DurationInput
  readonly sharedStorage?: boolean
  /** `false` switches traces off (HOSTING_TRACES=off). */
  readonly traces?: boolean
  /** Another storage instead of a fresh MemoryStorage (for example one that records its writes). */
  readonly storageLayer?: Layer.Layer<Ports.StoragePorts>
  /** Another object store instead of a fresh one in memory. */
  readonly objectStoreLayer?: Layer.Layer<ObjectStore.ObjectStore>
}

/** Every use case, the in-process event bus, a fake cluster and every storage port, in memory. */
export const make = (options: TestServicesOptions = {}) =>
  UseCases.layer.pipe(
    Layer.provideMerge(Layer.succeed(Events.EventsConfig, {
      replayCap: options.replayCap ?? 1000,
      heartbeat: Duration.decode(options.heartbeat ?? Duration.seconds(25)),
      retention: Duration.days(7)
    })),
    Layer.provideMerge(Layer.succeed(Chat.ChatConfig, {
      messageLimit: options.messageLimit ?? 200,
      maxAttachments: options.maxAttachments ?? 16,
      flushInterval: Duration.millis(50),
      heartbeat: Duration.decode(options.heartbeat ?? Duration.seconds(25)),
      leaseDuration: Duration.decode(options.leaseDuration ?? Duration.seconds(30)),
      sharedStorage: options.sharedStorage ?? false
    })),
    Layer.provideMerge(Layer.succeed(Traces.TracesConfig, { enabled: options.traces ?? true })),
    Layer.provideMerge(options.agentLayer ?? EchoAgent.layer(options.echo)),
    Layer.provideMerge(ReplyBus.layerLocal),
    Layer.provideMerge(options.objectStoreLayer ?? MemoryObjectStore.layer),
    Layer.provideMerge(Ports.IdGeneratorTimeOrdered),
    Layer.provideMerge(EventBus.layerLocal),
    Layer.provideMerge(options.clusterLayer ?? FakeCluster.layer(options.cluster)),
    Layer.provideMerge(options.storageLayer ?? MemoryStorage.layer)
  )

/** The services with the default settings. */
export const layer = make()
