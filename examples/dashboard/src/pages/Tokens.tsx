/**
 * Personal access tokens: the user's tokens with their scopes, accounts,
 * expiry and last use; a form that makes one and shows its secret once (the
 * server keeps only a hash of it); revoking one after a confirmation.
 */
import { useState } from "preact/hooks"
import * as id from "../api/ids"
import { call } from "../api/runtime"
import { ConfirmDialog } from "../components/ConfirmDialog"
import { OneTimeValue } from "../components/OneTimeValue"
import { Badge, ErrorNotice, Loading, PageHeading, Success, TableWrap, toDate, When } from "../components/ui"
import { useAction, useResource } from "../hooks"
import { useSession } from "../session"
import { accountsText, defaultExpiryDays, expiryDays, type Scope, scopeHelp, scopes, tokenRequest } from "../tokens"

/** A token as the list shows it (no secret). */
interface TokenRow {
  readonly id: string
  readonly name: string
}

const CreateToken = ({ onCreated }: { readonly onCreated: () => void }) => {
  const { state } = useSession()
  const accounts = state.status === "signed-in" ? state.accounts : []
  const [name, setName] = useState("")
  const [chosen, setChosen] = useState<ReadonlyArray<Scope>>(["read"])
  const [reach, setReach] = useState<ReadonlyArray<string>>([])
  const [days, setDays] = useState(defaultExpiryDays)
  const [invalid, setInvalid] = useState<{ readonly field: "name" | "scopes"; readonly problem: string } | undefined>(undefined)

  const create = useAction(async () => {
    const checked = tokenRequest({ name, scopes: chosen, accounts: reach, days })
    if (!checked.ok) {
      setInvalid({ field: checked.field, problem: checked.problem })
      return undefined
    }
    setInvalid(undefined)
    const { accounts: names, ...rest } = checked.request
    const made = await call((client) =>
      client.tokens.create({ payload: { ...rest, ...(names === undefined ? {} : { accounts: names.map(id.account) }) } })
    )
    setName("")
    onCreated()
    return made
  })

  const toggle = <A,>(list: ReadonlyArray<A>, item: A, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item))
  const made = create.result

  return (
    <section aria-labelledby="create-heading" class="card">
      <h2 id="create-heading">New token</h2>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void create.run()
        }}
      >
        <div class="fields">
          <div>
            <label for="token-name">Name</label>
            <input
              id="token-name"
              value={name}
              maxLength={100}
              autoComplete="off"
              aria-invalid={invalid?.field === "name"}
              aria-describedby="token-name-help"
              onInput={(event) => setName(event.currentTarget.value)}
            />
            <p id="token-name-help" class={invalid?.field === "name" ? "field-error" : "help"}>
              {invalid?.field === "name" ? invalid.problem : "What uses it, such as “CI deploy” or “laptop CLI”."}
            </p>
          </div>
          <div>
            <label for="token-expiry">Expires after</label>
            <select id="token-expiry" value={String(days)} onChange={(event) => setDays(Number(event.currentTarget.value))}>
              {expiryDays.map((n) => (
                <option key={n} value={String(n)}>
                  {n} days
                </option>
              ))}
            </select>
          </div>
        </div>
        <div class="fields">
          <fieldset class="choices" aria-describedby="token-scopes-help" aria-invalid={invalid?.field === "scopes"}>
            <legend>Scopes</legend>
            {scopes.map((scope) => (
              <div class="choice" key={scope}>
                <input
                  id={`scope-${scope}`}
                  type="checkbox"
                  checked={chosen.includes(scope)}
                  aria-describedby={`scope-${scope}-help`}
                  onChange={(event) => setChosen(toggle(chosen, scope, event.currentTarget.checked))}
                />
                <label for={`scope-${scope}`}>{scope}</label>
                <span id={`scope-${scope}-help`} class="muted small">
                  {scopeHelp[scope]}
                </span>
              </div>
            ))}
            <p id="token-scopes-help" class={invalid?.field === "scopes" ? "field-error" : "help"}>
              {invalid?.field === "scopes" ? invalid.problem : "A token never reaches further than you do."}
            </p>
          </fieldset>
          <fieldset class="choices" aria-describedby="token-accounts-help">
            <legend>Accounts (optional)</legend>
            {accounts.map((account) => (
              <div class="choice" key={account.name}>
                <input
                  id={`reach-${account.name}`}
                  type="checkbox"
                  checked={reach.includes(account.name)}
                  onChange={(event) => setReach(toggle(reach, account.name, event.currentTarget.checked))}
                />
                <label for={`reach-${account.name}`}>{account.name}</label>
              </div>
            ))}
            <p id="token-accounts-help" class="help">
              None chosen: every account you are a member of, including those you join later.
            </p>
          </fieldset>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={create.busy}>
            {create.busy ? "Creating…" : "Create token"}
          </button>
        </div>
      </form>
      <ErrorNotice error={create.error} context="The token could not be made" />
      <div aria-live="polite">
        {made !== undefined && (
          <>
            <Success>
              Token <strong>{made.name}</strong> made with the scopes {made.scopes.join(", ")}; it expires <When value={made.expires_at} />.
            </Success>
            <OneTimeValue
              label="Token secret"
              value={made.token}
              note="Shown only now: the server keeps only a hash of it. Store it where your script or CI keeps secrets and send it as “Authorization: Bearer …”."
            />
            <button type="button" class="link-button" onClick={create.reset}>
              I have stored it: hide the secret
            </button>
          </>
        )}
      </div>
    </section>
  )
}

export const TokensPage = () => {
  const list = useResource((signal) => call((client) => client.tokens.list(), signal), [])
  const [revoking, setRevoking] = useState<TokenRow | undefined>(undefined)
  const revoke = useAction(async (token: TokenRow) => {
    await call((client) => client.tokens.revoke({ path: { tokenId: token.id } }))
    list.reload()
    return token
  })
  const tokens = list.data?.tokens
  const now = Date.now()

  return (
    <>
      <PageHeading title="Tokens">Personal access tokens</PageHeading>
      <p>
        Tokens let scripts and CI call the API as you, with the scopes and accounts you choose. From a terminal,{" "}
        <code>hosting tokens create</code> makes one too; <code>hosting login</code> signs the CLI in without a token.
      </p>
      <CreateToken onCreated={list.reload} />
      <section aria-labelledby="tokens-heading" class="card">
        <h2 id="tokens-heading">Your tokens</h2>
        <ErrorNotice error={list.error} context="The tokens could not be read" />
        {tokens === undefined ? list.loading && <Loading /> : tokens.length === 0 ? (
          <p class="muted">You have no token yet.</p>
        ) : (
          <TableWrap label="Tokens table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Accounts</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.map((token) => {
                  const expired = (toDate(token.expires_at)?.getTime() ?? Infinity) <= now
                  return (
                    <tr key={token.id} data-token={token.id}>
                      <th scope="row">{token.name}</th>
                      <td>{token.scopes.join(", ")}</td>
                      <td>{accountsText(token.accounts)}</td>
                      <td>
                        <When value={token.created_at} />
                      </td>
                      <td>
                        {token.expires_at === null ? <span class="muted">never</span> : <When value={token.expires_at} />}
                        {expired && <Badge tone="warn">expired</Badge>}
                      </td>
                      <td>{token.last_used_at === null ? <span class="muted">never</span> : <When value={token.last_used_at} />}</td>
                      <td>
                        <button
                          type="button"
                          class="secondary small"
                          disabled={revoke.busy}
                          onClick={() => setRevoking({ id: token.id, name: token.name })}
                        >
                          Revoke<span class="visually-hidden"> token {token.name}</span>
                        </button>
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </TableWrap>
        )}
        <ErrorNotice error={revoke.error} context="The token could not be revoked" />
        <div aria-live="polite">{revoke.result !== undefined && <Success>Token {revoke.result.name} was revoked.</Success>}</div>
      </section>
      <ConfirmDialog
        open={revoking !== undefined}
        title="Revoke the token?"
        confirmLabel="Revoke token"
        danger
        onCancel={() => setRevoking(undefined)}
        onConfirm={() => {
          const token = revoking
          setRevoking(undefined)
          if (token !== undefined) void revoke.run(token)
        }}
      >
        <p>
          Token <strong>{revoking?.name}</strong> stops working at once: whatever uses it is refused from now on.
        </p>
      </ConfirmDialog>
    </>
  )
}
