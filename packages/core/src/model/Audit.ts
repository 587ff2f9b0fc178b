/**
 * The audit log of an account: who did what to it, and when. Entries are
 * written with the change they record (in its transaction) and never edited.
 */
import { Schema } from "effect"

/** What an entry records. */
export const AuditAction = Schema.Literal(
  "account.created",
  "account.renamed",
  "member.added",
  "member.role_changed",
  "member.removed",
  "invitation.created",
  "invitation.accepted",
  "invitation.withdrawn",
  "token.created",
  "token.revoked",
  "agent.published",
  "agent.yanked",
  "agent.unyanked",
  "agent.channel_set",
  "agent.channel_removed",
  "deployment.created",
  "deployment.undeployed",
  "deployment.settings_changed",
  "secret.set",
  "secret.deleted"
)
export type AuditAction = typeof AuditAction.Type

/** Entries a page holds at most, and when the caller does not say. */
export const maxPageSize = 100
export const defaultPageSize = 50
