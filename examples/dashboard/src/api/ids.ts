/**
 * The branded ids of `@hosting/core` from the text of an address or a form.
 * They are not checked here: the client encodes them with their schema and
 * the server answers a malformed one with a 400 that names it.
 */
import type { Conversation, Deployment, Ids } from "@hosting/core"
import { Ids as IdSchemas } from "@hosting/core"
import { Schema } from "effect"

export const account = (value: string) => value as Ids.AccountName
export const agent = (value: string) => value as Ids.AgentName
export const build = (value: string) => value as Ids.BuildId
export const semver = (value: string) => value as Ids.SemVer
export const range = (value: string) => value as Ids.VersionRange
export const channel = (value: string) => value as Ids.ChannelName
export const deployment = (value: string) => value as Deployment.DeploymentId
export const conversation = (value: string) => value as Conversation.ConversationId
export const user = (value: string) => value as Ids.UserId

/** True for a valid account name (slug). */
export const isAccountName = Schema.is(IdSchemas.AccountName)
/** True for a valid agent name. */
export const isAgentName = Schema.is(IdSchemas.AgentName)
/** True for a version of the form major.minor.patch the API accepts. */
export const isSemVer = Schema.is(IdSchemas.SemVer)
/** True for a version or a semver range the API accepts (1.4.0, ^1.2, >=1 <2). */
export const isVersionRange = Schema.is(IdSchemas.VersionRange)
/** True for a channel name the API accepts. */
export const isChannelName = Schema.is(IdSchemas.ChannelName)
/** True for a user id the API accepts (letters, digits and . _ @ -). */
export const isUserId = Schema.is(IdSchemas.UserId)
