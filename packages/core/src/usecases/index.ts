/**
 * The use cases, as services over the ports, and the layer that builds them
 * all.
 */
export * as Accounts from "./Accounts.js"
export * as Catalog from "./Catalog.js"
export * as Chat from "./chat/Chat.js"
export * as DeploymentCache from "./DeploymentCache.js"
export * as Deployments from "./Deployments.js"
export * as DeviceAuth from "./DeviceAuth.js"
export * as Events from "./Events.js"
export * as Files from "./Files.js"
export * as Identity from "./Identity.js"
export * as PrincipalCache from "./PrincipalCache.js"
export * as Releases from "./Releases.js"
export * as Rollouts from "./Rollouts.js"
export * as Secrets from "./Secrets.js"
export * as Setup from "./Setup.js"
export * as SingleSignOn from "./SingleSignOn.js"
export * as Tokens from "./Tokens.js"
export * as Traces from "./Traces.js"
export * as UseCases from "./UseCases.js"
