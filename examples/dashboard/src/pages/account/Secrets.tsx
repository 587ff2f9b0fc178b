/**
 * The secrets card of the account page: the names of the account's secrets
 * and when they were set (every member), and, for owners and admins, a
 * form that sets one and a button that deletes one. A value is write-only:
 * the field is emptied once it is saved, and the API never answers one.
 */
import { Secret } from "@hosting/core"
import { Schema } from "effect"
import { useEffect, useState } from "preact/hooks"
import * as id from "../../api/ids"
import { call } from "../../api/runtime"
import { ErrorNotice, Loading, Success, TableWrap, When } from "../../components/ui"
import { useAction, useResource } from "../../hooks"

interface SecretsProps {
  readonly account: string
  /** Owners and admins set and delete secrets; members see the names. */
  readonly manage: boolean
  /** A secret was set or deleted (the audit log shows it). */
  readonly onChanged: () => void
}

const isSecretName = Schema.is(Secret.SecretName)
const isSecretValue = Schema.is(Secret.SecretValue)
const secretName = (value: string) => value as Secret.SecretName

export const Secrets = ({ account, manage, onChanged }: SecretsProps) => {
  const [name, setName] = useState("")
  const [value, setValue] = useState("")
  const [invalid, setInvalid] = useState<"name" | "value" | undefined>(undefined)
  const [done, setDone] = useState("")
  const list = useResource(
    (signal) => call((client) => client.accounts.secrets({ path: { account: id.account(account) } }), signal),
    [account]
  )

  const save = useAction(async (input: { readonly name: string; readonly value: string }) => {
    setDone("")
    const result = await call((client) =>
      client.accounts.setSecret({ path: { account: id.account(account), secret: secretName(input.name) }, payload: { value: input.value } })
    )
    // Write-only: the value leaves the page once the server has it.
    setValue("")
    setName("")
    list.reload()
    onChanged()
    setDone(`${result.created ? "Created" : "Changed"} the secret ${result.name}. Running deployments keep the value they were deployed with until they are deployed again.`)
  })

  const remove = useAction(async (secret: string) => {
    setDone("")
    await call((client) => client.accounts.removeSecret({ path: { account: id.account(account), secret: secretName(secret) } }))
    list.reload()
    onChanged()
    setDone(`Deleted the secret ${secret}. Running deployments keep the value they were deployed with.`)
  })

  // Nothing typed for one account stays on screen for another.
  useEffect(() => {
    setName("")
    setValue("")
    setDone("")
    save.reset()
    remove.reset()
  }, [account])

  const secrets = list.data?.secrets
  return (
    <section aria-labelledby="secrets-heading" class="card">
      <h2 id="secrets-heading">Secrets</h2>
      <p class="help">
        Values that deployments of {account} read as environment variables: a spec's <code>env</code> entry{" "}
        <code>{"{ secret: NAME }"}</code>, or one given at deploy. A value is never shown again, here or anywhere; a deploy copies it
        into the deployment's Kubernetes Secret, so changing it affects a deployment only when it is deployed again.
      </p>
      {manage && (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            const trimmed = name.trim()
            const problem = !isSecretName(trimmed) ? "name" : !isSecretValue(value) ? "value" : undefined
            setInvalid(problem)
            if (problem === undefined) void save.run({ name: trimmed, value })
          }}
        >
          <div class="fields">
            <div>
              <label for="secret-name">Name</label>
              <input
                id="secret-name"
                value={name}
                autoComplete="off"
                spellcheck={false}
                aria-invalid={invalid === "name"}
                aria-describedby="secret-name-help"
                onInput={(event) => setName(event.currentTarget.value)}
              />
              <p id="secret-name-help" class={invalid === "name" ? "field-error" : "help"}>
                Upper-case letters, digits and underscores, not starting with a digit (like OPENAI_API_KEY). An existing name is replaced.
              </p>
            </div>
            <div>
              <label for="secret-value">Value</label>
              <textarea
                id="secret-value"
                value={value}
                rows={3}
                autoComplete="off"
                spellcheck={false}
                aria-invalid={invalid === "value"}
                aria-describedby="secret-value-help"
                onInput={(event) => setValue(event.currentTarget.value)}
              />
              <p id="secret-value-help" class={invalid === "value" ? "field-error" : "help"}>
                {invalid === "value"
                  ? `The value must be 1 to ${Secret.maxSecretBytes / 1024} KiB of text.`
                  : "Write-only: it is sent once and cleared from the page."}
              </p>
            </div>
          </div>
          <div class="actions">
            <button type="submit" class="primary" disabled={save.busy}>
              {save.busy ? "Saving…" : "Save secret"}
            </button>
          </div>
        </form>
      )}
      <ErrorNotice error={save.error} context="The secret could not be saved" />
      <div aria-live="polite">{done !== "" && <Success>{done}</Success>}</div>

      <ErrorNotice error={list.error} context="The secrets could not be read" />
      {secrets === undefined ? list.loading && <Loading /> : secrets.length === 0 ? (
        <p class="muted">No secrets yet.</p>
      ) : (
        <TableWrap label="Secrets table">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                {manage && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {secrets.map((secret) => (
                <tr key={secret.name} data-secret={secret.name}>
                  <th scope="row">
                    <code>{secret.name}</code>
                  </th>
                  <td>
                    <When value={secret.created_at} />
                  </td>
                  <td>
                    <When value={secret.updated_at} />
                  </td>
                  {manage && (
                    <td>
                      <button type="button" class="secondary small" disabled={remove.busy} onClick={() => void remove.run(secret.name)}>
                        Delete<span class="visually-hidden"> the secret {secret.name}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <ErrorNotice error={remove.error} context="The secret could not be deleted" />
    </section>
  )
}
