/**
 * Personal access tokens: made by a signed-in user for scripts and CI, each
 * with a name, the scopes it may act within, optionally the accounts it may
 * reach, and an expiry. The secret is shown once, when the token is made;
 * storage keeps only its hash.
 */
import { DateTime, Duration, Effect, Option } from "effect"
import { InvalidRequest, TokenNotFound } from "../model/Errors.js"
import type { AccountId, AccountName } from "../model/Ids.js"
import type { Principal } from "../model/Principal.js"
import * as Token from "../model/Token.js"
import { audit } from "../internal/audit.js"
import { AccountStore, IdGenerator, type PersonalToken, TokenStore, Transactor } from "../ports/Ports.js"
import * as Tracing from "../runtime/Tracing.js"
import { hashToken } from "./Identity.js"

/** How long a token lives when its maker does not say. */
export const defaultLifetime = Duration.days(30)

/** The longest lifetime a token may be given. */
export const longestLifetime = Duration.days(366)

/** A personal access token as its user sees it: never the secret. */
export interface TokenView {
  readonly id: string
  readonly name: string
  readonly scopes: ReadonlyArray<Token.Scope>
  /** The accounts it may reach, by name; null: every account of its user. */
  readonly accounts: ReadonlyArray<AccountName> | null
  readonly created_at: DateTime.Utc
  readonly expires_at: DateTime.Utc | null
  readonly last_used_at: DateTime.Utc | null
}

export class Tokens extends Effect.Service<Tokens>()("@hosting/core/Tokens", {
  effect: Effect.gen(function*() {
    const tokens = yield* TokenStore
    const accountStore = yield* AccountStore
    const ids = yield* IdGenerator
    const tx = yield* Transactor

    /** The accounts a token of the caller reaches: those it is limited to, else every account of the caller. */
    const reachedBy = (principal: Principal, limited: Option.Option<ReadonlyArray<AccountId>>) =>
      Option.getOrElse(limited, () => principal.memberships.map((m) => m.account_id))

    /** The view of a stored token; accounts the user has left since are named by their id. */
    const viewOf = (principal: Principal, token: PersonalToken): TokenView => ({
      id: token.id,
      name: token.name,
      scopes: Option.getOrElse(token.scopes, () => Token.allScopes),
      accounts: Option.getOrNull(Option.map(token.accounts, (accounts) =>
        accounts.map((id) => principal.memberships.find((m) => m.account_id === id)?.account ?? (id as string as AccountName))
      )),
      created_at: token.created_at,
      expires_at: Option.getOrNull(token.expires_at),
      last_used_at: Option.getOrNull(token.last_used_at)
    })

    /**
     * Makes a token for the caller. It may not reach further than the
     * credential that makes it: its scopes within the caller's, its accounts
     * among the caller's (by name; 400 for an account the caller does not
     * belong to).
     */
    const create = Tracing.fn("Tokens.create")(function*(principal: Principal, input: {
      readonly name: string
      readonly scopes: ReadonlyArray<Token.Scope>
      readonly expires_in?: number | undefined
      readonly accounts?: ReadonlyArray<AccountName> | undefined
    }) {
      const scopes = Token.allScopes.filter((scope) => input.scopes.includes(scope))
      const beyond = principal.scopes === undefined ? [] : scopes.filter((scope) => !principal.scopes!.includes(scope))
      if (beyond.length > 0) {
        return yield* new InvalidRequest({
          details: `scopes: this credential may not grant ${beyond.join(", ")}; a token reaches no further than the one that makes it.`
        })
      }
      let accounts = Option.none<ReadonlyArray<AccountId>>()
      if (input.accounts !== undefined) {
        const found: Array<AccountId> = []
        for (const name of new Set(input.accounts)) {
          const membership = principal.memberships.find((m) => m.account === name)
          if (membership === undefined) {
            return yield* new InvalidRequest({ details: `accounts: you are not a member of ${name} (or this credential may not reach it).` })
          }
          found.push(membership.account_id)
        }
        accounts = Option.some(found)
      }
      const lifetime = input.expires_in === undefined ? defaultLifetime : Duration.seconds(input.expires_in)
      if (Duration.greaterThan(lifetime, longestLifetime)) {
        return yield* new InvalidRequest({ details: `expires_in: at most ${Duration.toSeconds(longestLifetime)} seconds (366 days).` })
      }
      const secret = Token.newToken()
      const id = yield* ids.next
      const now = yield* DateTime.now
      const expiresAt = DateTime.addDuration(now, lifetime)
      const hash = yield* hashToken(secret)
      yield* tx.withTransaction(Effect.zipRight(
        tokens.add({
          hash,
          user_id: principal.user.id,
          expires_at: Option.some(expiresAt),
          parent_hash: Option.none(),
          now,
          personal: { id, name: input.name },
          limits: { scopes: Option.some(scopes), accounts }
        }),
        // Written to every account the token reaches: each account's managers see what can act on it.
        audit(
          accountStore,
          principal,
          reachedBy(principal, accounts),
          "token.created",
          input.name,
          `${principal.user.id} made the token ${input.name} (${id}): ${scopes.join(", ")}.`
        )
      ))
      const view = viewOf(principal, {
        id,
        name: input.name,
        scopes: Option.some(scopes),
        accounts,
        created_at: now,
        expires_at: Option.some(expiresAt),
        last_used_at: Option.none()
      })
      return { ...view, token: secret }
    })

    /** The caller's tokens, newest first, with their last use. */
    const list = Tracing.fn("Tokens.list")(function*(principal: Principal) {
      const stored = yield* tokens.listPersonal(principal.user.id)
      return stored.map((token) => viewOf(principal, token))
    })

    /** Removes one of the caller's tokens, with its audit entry (in the caller's transaction). */
    const removeToken = Effect.fnUntraced(function*(principal: Principal, id: string) {
      const removed = yield* tokens.removePersonal(principal.user.id, id)
      if (Option.isNone(removed)) return yield* new TokenNotFound({ id })
      const token = removed.value
      yield* audit(
        accountStore,
        principal,
        reachedBy(principal, token.accounts),
        "token.revoked",
        token.name,
        `${principal.user.id} revoked the token ${token.name} (${id}).`
      )
    })

    /** Revokes one of the caller's tokens (what was made with it goes too); 404 when the caller has none with that id. */
    const revoke = Tracing.fn("Tokens.revoke")(function*(principal: Principal, id: string) {
      yield* tx.withTransaction(removeToken(principal, id))
      return { message: `Token ${id} revoked.`, id }
    })

    return { create, list, revoke } as const
  })
}) {}
