/**
 * Deployments: an account running a build of an agent (its own or a
 * published one of another account) in a cluster namespace.
 */
import { Schema } from "effect"
import { AccountId, AccountName, AgentName, BuildId } from "./Ids.js"

/** Identifier of a deployment. */
export const DeploymentId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, {
    message: () => "must be 1-128 letters, digits, dots, underscores or hyphens"
  }),
  Schema.brand("DeploymentId")
)
export type DeploymentId = typeof DeploymentId.Type

/** A deployment as stored. */
export class DeploymentRecord extends Schema.Class<DeploymentRecord>("DeploymentRecord")({
  id: DeploymentId,
  /** The deploying account. */
  account_id: AccountId,
  account: AccountName,
  /** The account that publishes the agent, and the agent's name. */
  publisher_id: AccountId,
  publisher: AccountName,
  agent_name: AgentName,
  build_id: BuildId,
  namespace: Schema.String,
  status: Schema.String,
  deployed_at: Schema.DateTimeUtc,
  undeployed_at: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  spec: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}) {}
