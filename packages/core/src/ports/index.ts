/**
 * The ports: what the use cases need from the outside world, one file each
 * (the storage ports also as the `Ports` namespace). Adapters implement
 * them; @hosting/testing has a contract suite for each family.
 */
export * as AgentRuntime from "./AgentRuntime.js"
export * as Cluster from "./Cluster.js"
export * as EventBus from "./EventBus.js"
export * as ObjectStore from "./ObjectStore.js"
export * as Ports from "./Ports.js"
export * as ReplyBus from "./ReplyBus.js"
