/**
 * Deployments as a caller sees them, one or a page of an account's: the
 * read side the Deployments use cases share.
 */
import { Effect } from "effect"
import type { Account } from "../model/Account.js"
import { defaultPageSize, type DeploymentRecord, type StatusFilter, toView } from "../model/Deployment.js"
import type { AccountName } from "../model/Ids.js"
import * as Policy from "../model/Policy.js"
import type { Principal } from "../model/Principal.js"
import type { DeploymentStore } from "../ports/DeploymentStore.js"
import * as Tracing from "../runtime/Tracing.js"

/**
 * A deployment as the caller sees it: the values of the agent's `env` only
 * for members of the agent's account, those of the deploy's own env only
 * for members of the deploying account.
 */
export const viewFor = (principal: Principal, record: DeploymentRecord) =>
  toView(record, !Policy.seesAgentEnv(principal, record.publisher_id), !Policy.seesDeploymentEnv(principal, record.account_id))

/**
 * The deployments an account made, most recent first, kept by `status`
 * when given, a page at a time (members of the account). `accountNamed`
 * finds the account or fails as the use cases do.
 */
export const listOf = <E>(store: DeploymentStore["Type"], accountNamed: (name: AccountName) => Effect.Effect<Account, E>) =>
  Tracing.fn("Deployments.list")(function*(
    principal: Principal,
    name: AccountName,
    query: { readonly status?: StatusFilter | undefined; readonly limit?: number | undefined; readonly offset?: number | undefined }
  ) {
    const account = yield* accountNamed(name)
    yield* Policy.requireMember(principal, account, "listing its deployments")
    const limit = query.limit ?? defaultPageSize
    const offset = query.offset ?? 0
    const found = yield* store.listForAccount(account.id, { status: query.status }, { limit, offset })
    return { deployments: found.deployments.map((record) => viewFor(principal, record)), total: found.total, limit, offset }
  })
