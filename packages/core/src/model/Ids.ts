/**
 * Identifiers and names of the domain, as branded schemas so that an account
 * name can never be passed where a build id is expected.
 */
import { Schema } from "effect"
import * as semver from "semver"

/** A DNS-label style slug: lowercase letters, digits and inner hyphens, 1 to 63 characters. */
const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Name of an account as used in paths (slug). */
export const AccountName = Schema.String.pipe(
  Schema.pattern(slugPattern, {
    message: () => "must be a slug: 1-63 lowercase letters, digits or inner hyphens"
  }),
  Schema.brand("AccountName")
)
export type AccountName = typeof AccountName.Type

/** Name of an agent within its account (slug). */
export const AgentName = Schema.String.pipe(
  Schema.pattern(slugPattern, {
    message: () => "must be a slug: 1-63 lowercase letters, digits or inner hyphens"
  }),
  Schema.brand("AgentName")
)
export type AgentName = typeof AgentName.Type

/** Identifier of a build, chosen by whoever registers it (a CI run id, a digest, a tag). */
export const BuildId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$/, {
    message: () => "must be 1-128 characters of letters, digits and . _ : @ + -, starting with a letter or digit"
  }),
  Schema.brand("BuildId")
)
export type BuildId = typeof BuildId.Type

/** Internal, immutable identifier of an account (the name can change). */
export const AccountId = Schema.String.pipe(Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type

/** Internal identifier of an agent. */
export const AgentId = Schema.String.pipe(Schema.brand("AgentId"))
export type AgentId = typeof AgentId.Type

/** Identifier of a user. */
export const UserId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, {
    message: () => "must be 1-128 characters of letters, digits and . _ @ -"
  }),
  Schema.brand("UserId")
)
export type UserId = typeof UserId.Type

/** A strict semantic version `major.minor.patch`, without prerelease or build metadata. */
export const SemVer = Schema.String.pipe(
  Schema.pattern(/^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/, {
    message: () => "must be a semantic version of the form major.minor.patch (for example 1.4.0)"
  }),
  Schema.brand("SemVer")
)
export type SemVer = typeof SemVer.Type

/**
 * A semver range as npm writes them (`^1.2`, `~1.4.0`, `>=1 <2`, `1.x`, an
 * exact `1.4.0`): what a deploy may ask for instead of one version.
 */
export const VersionRange = Schema.String.pipe(
  Schema.maxLength(256),
  Schema.filter((text) => semver.validRange(text) !== null, {
    message: () => "must be a semantic version or a semver range (for example 1.4.0, ^1.2, ~1.4.0 or >=1 <2)"
  }),
  Schema.brand("VersionRange")
)
export type VersionRange = typeof VersionRange.Type

/** A release channel of an agent (`stable`, `beta`): a named pointer to one of its published versions. */
export const ChannelName = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9-]{0,62}$/, {
    message: () => "must be 1-63 lowercase letters, digits or hyphens, starting with a letter (for example stable or beta)"
  }),
  Schema.brand("ChannelName")
)
export type ChannelName = typeof ChannelName.Type

/** The channel every agent has without setting it: its highest published version that is not yanked. */
export const latestChannel = "latest" as ChannelName

/** Role of a member in an account. */
export const Role = Schema.Literal("owner", "admin", "member")
export type Role = typeof Role.Type

/** Orders versions from highest to lowest (for sorting). */
export const compareSemVerDescending = (a: SemVer, b: SemVer): number => semver.rcompare(a, b)
