/**
 * Every use case of the core as one Layer, for servers that want them all.
 */
import { Layer } from "effect"
import { Accounts } from "./Accounts.js"
import { Catalog } from "./Catalog.js"
import { Chat } from "./chat/Chat.js"
import { DeviceAuth } from "./DeviceAuth.js"
import { Deployments } from "./Deployments.js"
import { Events } from "./Events.js"
import { Files } from "./Files.js"
import { Identity } from "./Identity.js"
import * as DeploymentCache from "./DeploymentCache.js"
import * as PrincipalCache from "./PrincipalCache.js"
import { Releases } from "./Releases.js"
import { Rollouts } from "./Rollouts.js"
import { Secrets } from "./Secrets.js"
import { Setup } from "./Setup.js"
import { SingleSignOn } from "./SingleSignOn.js"
import { Tokens } from "./Tokens.js"
import { Traces } from "./Traces.js"

/**
 * Every use case (the rollouts' poll, `Rollouts.poller`, is started apart);
 * needs the storage ports, an IdGenerator, an EventBus, a
 * ReplyBus, a Cluster, an AgentRuntime and an ObjectStore. The use cases
 * (and whoever writes through this layer's TokenStore and AccountStore)
 * read tokens through the PrincipalCache, and deployments through the
 * DeploymentCache (with its DeploymentStore).
 */
export const layer = Layer.mergeAll(
  // Releases publish through the Catalog and roll deployments forward through Deployments: one instance of each.
  Releases.Default.pipe(Layer.provideMerge(Layer.merge(Catalog.Default, Deployments.Default))),
  Accounts.Default,
  Rollouts.Default,
  Events.Default,
  Secrets.Default,
  Chat.Default,
  Files.Default,
  Traces.Default,
  DeviceAuth.Default,
  SingleSignOn.Default.pipe(Layer.provide(DeviceAuth.Default)),
  Setup.Default,
  Tokens.Default
).pipe(Layer.provideMerge(Identity.Default), Layer.provideMerge(DeploymentCache.layer()), Layer.provideMerge(PrincipalCache.layer))
