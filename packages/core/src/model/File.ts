/**
 * Files of a deployment: uploaded by users (and attached to messages) or
 * produced by the agent.
 */
import { Schema } from "effect"
import { ConversationId } from "./Conversation.js"
import { DeploymentId } from "./Deployment.js"
import { UserId } from "./Ids.js"

/** A file as stored (its bytes live in the object store). */
export class FileRecord extends Schema.Class<FileRecord>("FileRecord")({
  key: Schema.String,
  deployment_id: DeploymentId,
  owner_id: UserId,
  filename: Schema.String,
  content_type: Schema.String,
  size: Schema.Int,
  status: Schema.Literal("pending", "ready"),
  origin: Schema.Literal("user", "agent"),
  conversation_id: Schema.OptionFromNullOr(ConversationId),
  created_at: Schema.DateTimeUtc
}) {}
