/**
 * Writing the audit log: an entry of what the caller did to an account,
 * stamped with the time.
 */
import { DateTime, Effect } from "effect"
import type { AuditAction } from "../model/Audit.js"
import type { AccountId } from "../model/Ids.js"
import type { Principal } from "../model/Principal.js"
import type { AccountStore } from "../ports/AccountStore.js"

/** Records that the principal did `action` to `target` in each account (none: nothing written). */
export const audit = (
  store: AccountStore["Type"],
  principal: Principal,
  accounts: ReadonlyArray<AccountId>,
  action: AuditAction,
  target: string,
  details: string
) =>
  accounts.length === 0 ? Effect.void : Effect.flatMap(DateTime.now, (at) =>
    store.recordAudit(accounts.map((account_id) => ({ account_id, at, actor: principal.user.id, action, target, details }))))
