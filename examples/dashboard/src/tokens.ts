/**
 * The personal access token form: the scopes and lifetimes it offers, and
 * turning what was filled in into the payload of `POST /tokens`, or into the
 * sentence that says what is missing.
 */
import { Token } from "@hosting/core"

export type Scope = Token.Scope

/** Every scope, in the order the API lists them. */
export const scopes: ReadonlyArray<Scope> = Token.allScopes

/** What each scope allows (as the API reference puts it), shown beside its checkbox. */
export const scopeHelp: Readonly<Record<Scope, string>> = {
  read: "every read",
  chat: "conversations and their files",
  publish: "register and publish builds",
  deploy: "deploy, undeploy, report traces",
  admin: "accounts, members, invitations and tokens"
}

/** The lifetimes the form offers, in days; the API allows at most 366. */
export const expiryDays: ReadonlyArray<number> = [7, 30, 90, 366]
export const defaultExpiryDays = 30

const secondsPerDay = 24 * 3600

/** What the person filled in. */
export interface TokenForm {
  readonly name: string
  readonly scopes: ReadonlyArray<Scope>
  /** The accounts chosen; none means every account of the user. */
  readonly accounts: ReadonlyArray<string>
  readonly days: number
}

/** The payload of `POST /tokens`. */
export interface TokenRequest {
  readonly name: string
  readonly scopes: ReadonlyArray<Scope>
  readonly expires_in: number
  readonly accounts?: ReadonlyArray<string>
}

export type Checked =
  | { readonly ok: true; readonly request: TokenRequest }
  | { readonly ok: false; readonly field: "name" | "scopes"; readonly problem: string }

/**
 * Checks the form as the API would (a name of 1 to 100 characters, at least
 * one scope) and builds the request, with the scopes in the API's order and
 * no `accounts` when none was chosen (the API rejects an empty list).
 */
export const tokenRequest = (form: TokenForm): Checked => {
  const name = form.name.trim()
  if (name === "") return { ok: false, field: "name", problem: "Give the token a name, such as the script or machine that uses it." }
  if (name.length > 100) return { ok: false, field: "name", problem: "The name may have at most 100 characters." }
  const chosen = scopes.filter((scope) => form.scopes.includes(scope))
  if (chosen.length === 0) return { ok: false, field: "scopes", problem: "Choose at least one scope." }
  const days = Math.min(366, Math.max(1, Math.round(form.days)))
  return {
    ok: true,
    request: {
      name,
      scopes: chosen,
      expires_in: days * secondsPerDay,
      ...(form.accounts.length > 0 ? { accounts: [...new Set(form.accounts)] } : {})
    }
  }
}

/** The accounts a token reaches, in words: null from the API means every account of its user. */
export const accountsText = (accounts: ReadonlyArray<string> | null) => (accounts === null ? "all" : accounts.join(", "))
