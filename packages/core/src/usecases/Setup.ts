/**
 * The first start of an instance: with no user in storage, each process
 * that starts makes a one-time setup code and keeps its hash; the first
 * user is made by whoever shows one of the codes, and every code is then
 * spent. The first user administers the instance and gets a personal
 * access token with every scope.
 */
import { DateTime, Effect, Option } from "effect"
import { SetupCodeInvalid, SetupDone } from "../model/Errors.js"
import type { UserId } from "../model/Ids.js"
import * as Token from "../model/Token.js"
import { AccountStore, IdGenerator, TokenStore, Transactor } from "../ports/Ports.js"
import * as Tracing from "../runtime/Tracing.js"
import { hashToken } from "./Identity.js"

/** Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L, no U). */
const codeAlphabet = "ABCDEFGHJKMNPQRSTVWXYZ23456789"

/** Four groups of five characters: about 98 bits, typed from a log line or a file. */
export const newSetupCode = (): string => {
  const chars: Array<string> = []
  while (chars.length < 20) {
    for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(32))) {
      // 240 = 8 * 30: bytes above it would favour the first characters.
      if (byte < 240 && chars.length < 20) chars.push(codeAlphabet[byte % codeAlphabet.length]!)
    }
  }
  return [0, 5, 10, 15].map((at) => chars.slice(at, at + 5).join("")).join("-")
}

/** A typed code as it was made: upper case, separators where they belong, anything else dropped. */
export const normalizeSetupCode = (input: string): string => {
  const chars = input.toUpperCase().replace(/[^A-Z0-9]/g, "")
  return chars.length === 20 ? [0, 5, 10, 15].map((at) => chars.slice(at, at + 5)).join("-") : chars
}

/** The name of the token setting up makes. */
export const setupTokenName = "setup"

export class Setup extends Effect.Service<Setup>()("@hosting/core/Setup", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const tokens = yield* TokenStore
    const tx = yield* Transactor
    const ids = yield* IdGenerator

    /** At a start: a new setup code when storage has no user (its hash kept), else none. */
    const begin = Tracing.fn("Setup.begin")(function*() {
      if (yield* accounts.hasUsers) return Option.none<string>()
      const code = newSetupCode()
      yield* accounts.addSetupCode({ hash: yield* hashToken(code), now: yield* DateTime.now })
      return Option.some(code)
    })

    /**
     * Spends the code of hash `hash` and makes the first user with its token
     * (in the caller's transaction); refused once any user exists.
     */
    const firstUser = Effect.fnUntraced(function*(
      input: { readonly user_id: UserId; readonly name: string },
      hash: string,
      tokenHash: string,
      tokenId: string,
      now: DateTime.Utc
    ) {
      if (yield* accounts.hasUsers) return yield* new SetupDone()
      if (!(yield* accounts.spendSetupCode(hash))) return yield* new SetupCodeInvalid()
      yield* accounts.addUser({ id: input.user_id, name: input.name, instance_admin: true, now })
      yield* tokens.add({
        hash: tokenHash,
        user_id: input.user_id,
        expires_at: Option.none(),
        parent_hash: Option.none(),
        now,
        personal: { id: tokenId, name: setupTokenName },
        limits: { scopes: Option.none(), accounts: Option.none() }
      })
    })

    /**
     * Spends a setup code: makes the first user (an instance administrator)
     * and a token with every scope for them, in one transaction. Refused once
     * any user exists, and for a code no process issued.
     */
    const complete = Tracing.fn("Setup.complete")(function*(input: {
      readonly code: string
      readonly user_id: UserId
      readonly name: string
    }) {
      const hash = yield* hashToken(normalizeSetupCode(input.code))
      const token = Token.newToken()
      const tokenHash = yield* hashToken(token)
      const tokenId = yield* ids.next
      const now = yield* DateTime.now
      yield* tx.withTransaction(firstUser(input, hash, tokenHash, tokenId, now))
      return {
        user: { id: input.user_id, name: input.name, instance_admin: true },
        token,
        token_id: tokenId
      }
    })

    /** Whether the instance still waits for its first user (a setup code can make one). */
    const open = Effect.map(accounts.hasUsers, (has) => !has)

    return { begin, complete, open } as const
  })
}) {}
