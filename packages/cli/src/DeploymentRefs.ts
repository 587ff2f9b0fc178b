/**
 * The deployment a command line names: a whole id, the start of one (with or
 * without `dep-`) among the deployments of the caller's accounts, or
 * `account/agent` when exactly one live deployment of that agent is the
 * caller's. Ambiguous names are refused with the candidates.
 */
import { ClientError } from "@hosting/client"
import type { Deployment } from "@hosting/core"
import { Effect } from "effect"
import type { DeploymentRef } from "./Arguments.js"
import { CliFailure, notFound, usageError } from "./ExitCode.js"
import type * as Session from "./Session.js"

/** The most pages of one account's deployments a prefix is looked for in (200 a page). */
const maxPages = 50
const pageSize = 200

const missing = (details: string) => new CliFailure({ exitCode: notFound, error: "deployment_not_found", details })

/** `dep-1 (acme/helper, available), dep-2 (…)`: the candidates of an ambiguous name, the first ten. */
const candidates = (found: ReadonlyArray<Deployment.Deployment>) =>
  `${found.slice(0, 10).map((d) => `${d.id} (${d.agent} in ${d.account}, ${d.status})`).join(", ")}${found.length > 10 ? ", …" : ""}`

/** Every deployment of the caller's accounts whose id starts with `prefix` (or `dep-<prefix>`). */
const byPrefix = (session: Session.Session, prefix: string) =>
  Effect.gen(function*() {
    const { accounts } = yield* session.client.accounts.me()
    const matches = new Map<string, Deployment.Deployment>()
    for (const account of accounts) {
      for (let page = 0; page < maxPages; page++) {
        const found = yield* session.client.deployments.list({
          path: { account: account.name },
          urlParams: { limit: pageSize, offset: page * pageSize }
        })
        for (const d of found.deployments) {
          if (d.id.startsWith(prefix) || d.id.startsWith(`dep-${prefix}`)) matches.set(d.id, d)
        }
        if ((page + 1) * pageSize >= found.total) break
      }
    }
    return [...matches.values()]
  })

const statusOf = (error: unknown) => ClientError.isApiError(error) ? ClientError.statusOfApiError(error) : undefined

/** A deployment found: its id, and its record unless the caller may not read it (a token without the read scope). */
export interface Resolved {
  readonly id: Deployment.DeploymentId
  readonly record: Deployment.Deployment | undefined
}

const found = (record: Deployment.Deployment): Resolved => ({ id: record.id, record })

/** The deployment `ref` names. */
export const resolve = (session: Session.Session, ref: DeploymentRef): Effect.Effect<Resolved, unknown> =>
  Effect.gen(function*() {
    if (ref._tag === "Agent") {
      const { account, name } = ref.agent
      const { deployments } = yield* session.client.deployments.history({ path: { account, name } })
      const live = deployments.filter((d) => d.undeployed_at === null)
      if (live.length === 1) return found(live[0]!)
      if (live.length === 0) return yield* missing(`${account}/${name} has no live deployment of your accounts`)
      return yield* usageError(
        `${account}/${name} has ${live.length} live deployments: ${candidates(live)}; name one by its id`,
        "ambiguous_deployment"
      )
    }
    // A token that may not read deployments (403) still names one by its whole id: the command's own request decides.
    const exact = yield* session.client.deployments.get({ path: { deploymentId: ref.id } }).pipe(
      Effect.map((d): Resolved | undefined => found(d)),
      Effect.catchIf((error) => statusOf(error) === 403, () => Effect.succeed({ id: ref.id, record: undefined })),
      Effect.catchIf((error) => statusOf(error) === 404, () => Effect.succeed(undefined))
    )
    if (exact !== undefined) return exact
    const matches = yield* byPrefix(session, ref.id)
    if (matches.length === 1) return found(matches[0]!)
    if (matches.length === 0) return yield* missing(`no deployment of your accounts is or starts with ${ref.id}`)
    return yield* usageError(`${ref.id} starts ${matches.length} deployments: ${candidates(matches)}; give more of the id`, "ambiguous_id")
  })
