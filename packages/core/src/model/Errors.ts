/**
 * The domain's errors. Each carries a stable snake_case `code` and a readable
 * `message`; which HTTP status they become is decided once, in @hosting/http.
 */
import { Schema } from "effect"
import type { ClusterError } from "../ports/Cluster.js"
import type {
  AccountBusy,
  AccountExists,
  AccountNameTaken,
  AlreadyMember,
  InvitationNotFound,
  LastOwner,
  MemberNotFound,
  SetupCodeInvalid,
  SetupDone,
  TokenNotFound,
  UserNotFound
} from "./AccountErrors.js"
import type {
  AttachmentInvalid,
  ConversationNotFound,
  FileComplete,
  FileNotFound,
  FileTooLarge,
  FilesUnavailable,
  MessageLimitReached,
  ReplyInProgress,
  TooManyAttachments,
  UploadExpired,
  UploadIncomplete
} from "./ChatErrors.js"

// The errors of accounts, members, invitations, setup and tokens, and those of
// conversations and files, live in their own modules; they are part of this one.
export * from "./AccountErrors.js"
export * from "./ChatErrors.js"

/** The request is malformed in a way the schemas could not express (a bad combination, a bad value). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  details: Schema.String
}) {
  readonly code = "invalid_request"
  override get message() {
    return this.details
  }
}

/** The agent specification could not be parsed or is not a mapping. */
export class SpecInvalid extends Schema.TaggedError<SpecInvalid>()("SpecInvalid", {
  details: Schema.String
}) {
  readonly code = "invalid_spec"
  override get message() {
    return `The agent specification is not valid: ${this.details}`
  }
}

/** The version is already taken by another build of the agent (versions are immutable). */
export class VersionAlreadyPublished extends Schema.TaggedError<VersionAlreadyPublished>()("VersionAlreadyPublished", {
  agent: Schema.String,
  version: Schema.String,
  buildId: Schema.String
}) {
  readonly code = "version_already_published"
  override get message() {
    return `Version ${this.version} of ${this.agent} is already published for build ${this.buildId}; versions are immutable, choose a new one.`
  }
}

/** The build already carries another version (a build is published once). */
export class BuildAlreadyPublished extends Schema.TaggedError<BuildAlreadyPublished>()("BuildAlreadyPublished", {
  agent: Schema.String,
  buildId: Schema.String,
  version: Schema.String
}) {
  readonly code = "build_already_published"
  override get message() {
    return `Build ${this.buildId} of ${this.agent} is already published as ${this.version}; register a new build to publish another version.`
  }
}

/** No account has that name. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  account: Schema.String
}) {
  readonly code = "account_not_found"
  override get message() {
    return `Account ${this.account} does not exist.`
  }
}

/** No such agent, or not one the caller may see. */
/** A trace that does not exist, or that the caller may not see (the same answer, so ids are not probed). */
export class TraceNotFound extends Schema.TaggedError<TraceNotFound>()("TraceNotFound", {
  trace_id: Schema.String
}) {
  readonly code = "trace_not_found"
  override get message() {
    return `Trace ${this.trace_id} does not exist.`
  }
}

export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  agent: Schema.String
}) {
  readonly code = "agent_not_found"
  override get message() {
    return `Agent ${this.agent} does not exist.`
  }
}

/** No build with that id for the agent (or none that fits the request). */
export class BuildNotFound extends Schema.TaggedError<BuildNotFound>()("BuildNotFound", {
  agent: Schema.String,
  buildId: Schema.String
}) {
  readonly code = "build_not_found"
  override get message() {
    return this.buildId === ""
      ? `Agent ${this.agent} has no build that can be used here.`
      : `Build ${this.buildId} of agent ${this.agent} does not exist.`
  }
}

/** No published version with that number. */
export class VersionNotFound extends Schema.TaggedError<VersionNotFound>()("VersionNotFound", {
  agent: Schema.String,
  version: Schema.String
}) {
  readonly code = "version_not_found"
  override get message() {
    return this.version === ""
      ? `Agent ${this.agent} has no published version to deploy.`
      : `Agent ${this.agent} has no published version ${this.version}.`
  }
}

/** No published version, yanked ones left out, matches a semver range (or a channel names none). */
export class NoMatchingVersion extends Schema.TaggedError<NoMatchingVersion>()("NoMatchingVersion", {
  agent: Schema.String,
  range: Schema.String
}) {
  readonly code = "no_matching_version"
  override get message() {
    return `Agent ${this.agent} has no published version that matches ${this.range} (yanked versions are skipped).`
  }
}

/** A yanked version was asked for where only an installable one will do. */
export class VersionYanked extends Schema.TaggedError<VersionYanked>()("VersionYanked", {
  agent: Schema.String,
  version: Schema.String,
  reason: Schema.String
}) {
  readonly code = "version_yanked"
  override get message() {
    return `Version ${this.version} of ${this.agent} is yanked (${this.reason}); choose another version, or undo the yank with ` +
      `DELETE /agents/${this.agent}/versions/${this.version}/yank.`
  }
}

/** No channel of that name for the agent. */
export class ChannelNotFound extends Schema.TaggedError<ChannelNotFound>()("ChannelNotFound", {
  agent: Schema.String,
  channel: Schema.String
}) {
  readonly code = "channel_not_found"
  override get message() {
    return `Agent ${this.agent} has no channel ${this.channel}.`
  }
}

/** No deployment with that id (or namespace), or not one the caller may see. */
/** A rollback found no earlier build in the deployment's history (or not the one it was asked for). */
export class NothingToRollBack extends Schema.TaggedError<NothingToRollBack>()("NothingToRollBack", {
  deployment: Schema.String,
  details: Schema.String
}) {
  readonly code = "nothing_to_roll_back"
  override get message() {
    return this.details
  }
}

/** No deployment with that id (or namespace), or not one the caller may see. */
export class DeploymentNotFound extends Schema.TaggedError<DeploymentNotFound>()("DeploymentNotFound", {
  deployment: Schema.String
}) {
  readonly code = "deployment_not_found"
  override get message() {
    return `Deployment ${this.deployment} does not exist.`
  }
}

/** The account keeps no secret of that name. */
export class SecretNotFound extends Schema.TaggedError<SecretNotFound>()("SecretNotFound", {
  account: Schema.String,
  name: Schema.String
}) {
  readonly code = "secret_not_found"
  override get message() {
    return `Account ${this.account} has no secret named ${this.name}.`
  }
}

/**
 * A deploy refers (in the spec's `env` or in its own) to secrets the
 * deploying account does not keep; nothing was deployed.
 */
export class SecretsMissing extends Schema.TaggedError<SecretsMissing>()("SecretsMissing", {
  account: Schema.String,
  names: Schema.Array(Schema.String)
}) {
  readonly code = "secret_missing"
  override get message() {
    const several = this.names.length > 1
    return `Account ${this.account} has no secret${several ? "s" : ""} named ${this.names.join(", ")}, which this deployment ` +
      `refers to; nothing was deployed. Set ${several ? "them" : "it"} (PUT /accounts/${this.account}/secrets/{name}, or ` +
      `hosting secrets set) and deploy again.`
  }
}

/** No ConfigMap of that name in the deployment's namespace. */
export class ConfigMapNotFound extends Schema.TaggedError<ConfigMapNotFound>()("ConfigMapNotFound", {
  namespace: Schema.String,
  name: Schema.String
}) {
  readonly code = "configmap_not_found"
  override get message() {
    return `ConfigMap ${this.name} does not exist in namespace ${this.namespace}.`
  }
}

/** No pod of that name in the deployment's namespace. */
export class PodNotFound extends Schema.TaggedError<PodNotFound>()("PodNotFound", {
  namespace: Schema.String,
  pod: Schema.String
}) {
  readonly code = "pod_not_found"
  override get message() {
    return `Pod ${this.pod} does not exist in namespace ${this.namespace}.`
  }
}

/** Traces are switched off (`HOSTING_TRACES=off`) or their store cannot be used. */
export class TracesUnavailable extends Schema.TaggedError<TracesUnavailable>()("TracesUnavailable", {
  details: Schema.String
}) {
  readonly code = "service_unavailable"
  override get message() {
    return this.details
  }
}

/**
 * A device-flow request that cannot be answered with a token (yet): the
 * RFC 8628 / RFC 6749 error code, and a sentence for people.
 */
export class DeviceFlowError extends Schema.TaggedError<DeviceFlowError>()("DeviceFlowError", {
  code: Schema.Literal(
    "authorization_pending",
    "slow_down",
    "expired_token",
    "access_denied",
    "invalid_grant",
    "invalid_request",
    "invalid_scope",
    "unsupported_grant_type"
  ),
  details: Schema.String
}) {
  override get message() {
    return this.details
  }
}

/** No credential, or one that is unknown or expired. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  details: Schema.String
}) {
  readonly code = "unauthorized"
  override get message() {
    return this.details
  }
}

/** The caller is known but lacks the role the operation needs. */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  details: Schema.String
}) {
  readonly code = "forbidden"
  override get message() {
    return this.details
  }
}

/** A storage adapter failed (connection lost, constraint broken by a bug). Never shown to callers. */
export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  operation: Schema.String,
  cause: Schema.Defect
}) {
  readonly code = "internal_error"
  override get message() {
    return `Storage failed during ${this.operation}`
  }
}

/** Every error a use case may fail with. */
export type DomainError =
  | ConversationNotFound
  | FileNotFound
  | AttachmentInvalid
  | FileTooLarge
  | UploadIncomplete
  | UploadExpired
  | FileComplete
  | FilesUnavailable
  | TracesUnavailable
  | DeviceFlowError
  | MessageLimitReached
  | ReplyInProgress
  | TooManyAttachments
  | VersionNotFound
  | NoMatchingVersion
  | VersionYanked
  | ChannelNotFound
  | DeploymentNotFound
  | NothingToRollBack
  | SecretNotFound
  | SecretsMissing
  | ConfigMapNotFound
  | PodNotFound
  | ClusterError
  | InvalidRequest
  | SpecInvalid
  | VersionAlreadyPublished
  | BuildAlreadyPublished
  | AccountNameTaken
  | AccountExists
  | AccountNotFound
  | UserNotFound
  | MemberNotFound
  | LastOwner
  | SetupCodeInvalid
  | SetupDone
  | TokenNotFound
  | InvitationNotFound
  | AlreadyMember
  | AccountBusy
  | AgentNotFound
  | TraceNotFound
  | BuildNotFound
  | Unauthenticated
  | PermissionDenied
  | StorageError
