/**
 * The storage ports of the core (one file each, beside the other ports of
 * this folder), as the `Ports` namespace. Adapters implement them as Layers;
 * the contract suites in @hosting/testing say what every implementation
 * must do.
 */
export * from "./Transactor.js"
export * from "./AccountStore.js"
export * from "./TokenStore.js"
export * from "./DeviceCodeStore.js"
export * from "./AgentStore.js"
export * from "./EventLog.js"
export * from "./DeploymentStore.js"
export * from "./IdGenerator.js"
export * from "./ConversationStore.js"
export * from "./LeaseOwner.js"
export * from "./FileStore.js"
export * from "./TraceStore.js"
export * from "./A2aTaskStore.js"

import type { Transactor } from "./Transactor.js"
import type { AccountStore } from "./AccountStore.js"
import type { TokenStore } from "./TokenStore.js"
import type { DeviceCodeStore } from "./DeviceCodeStore.js"
import type { AgentStore } from "./AgentStore.js"
import type { EventLog } from "./EventLog.js"
import type { DeploymentStore } from "./DeploymentStore.js"
import type { ConversationStore } from "./ConversationStore.js"
import type { FileStore } from "./FileStore.js"
import type { TraceStore } from "./TraceStore.js"

/** The storage port family: what a storage adapter provides. */
export type StoragePorts =
  | AccountStore
  | AgentStore
  | TokenStore
  | EventLog
  | DeploymentStore
  | ConversationStore
  | FileStore
  | TraceStore
  | DeviceCodeStore
  | Transactor
