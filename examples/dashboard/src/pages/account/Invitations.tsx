/**
 * The invitations card of the account page (owners and admins): a form
 * that makes an invitation and shows its link once (the server keeps only
 * what it needs to check the code, so the link cannot be shown again), and
 * the invitations still waiting, each of which can be withdrawn.
 */
import { useEffect, useState } from "preact/hooks"
import * as id from "../../api/ids"
import { call } from "../../api/runtime"
import { OneTimeValue } from "../../components/OneTimeValue"
import { Badge, ErrorNotice, Loading, Success, TableWrap, When } from "../../components/ui"
import { useAction, useResource } from "../../hooks"
import { inviteRoles, type Role } from "../../roles"

interface InvitationsProps {
  readonly account: string
  /** The signed-in user's role in the account: owners invite with any role, admins with member. */
  readonly myRole: Role | undefined
  /** An invitation was made or withdrawn (the audit log shows it). */
  readonly onChanged: () => void
}

/** A plausible e-mail address, as the API checks it: something, an @, something, no spaces. */
const looksLikeEmail = (value: string) => /^[^\s@]+@[^\s@]+$/.test(value)

export const Invitations = ({ account, myRole, onChanged }: InvitationsProps) => {
  const choices = inviteRoles(myRole)
  const [role, setRole] = useState<Role>("member")
  const [email, setEmail] = useState("")
  const [invalidEmail, setInvalidEmail] = useState(false)
  const [withdrawn, setWithdrawn] = useState("")
  const waiting = useResource(
    (signal) => call((client) => client.accounts.invitations({ path: { account: id.account(account) } }), signal),
    [account]
  )

  const invite = useAction(async (input: { readonly role: Role; readonly email: string }) => {
    setWithdrawn("")
    const made = await call((client) =>
      client.accounts.invite({
        path: { account: id.account(account) },
        payload: { role: input.role, ...(input.email === "" ? {} : { email: input.email }) }
      })
    )
    waiting.reload()
    onChanged()
    return made
  })

  const withdraw = useAction(async (invitation: { readonly id: string; readonly label: string }) => {
    await call((client) => client.accounts.withdraw({ path: { account: id.account(account), invitationId: invitation.id } }))
    waiting.reload()
    onChanged()
    setWithdrawn(`The invitation ${invitation.label} was withdrawn.`)
  })

  // A link made for another account must not stay on screen after a rename or a move to another account.
  useEffect(() => {
    invite.reset()
    withdraw.reset()
    setWithdrawn("")
  }, [account])

  const made = invite.result
  const invitations = waiting.data?.invitations
  return (
    <section aria-labelledby="invitations-heading" class="card">
      <h2 id="invitations-heading">Invitations</h2>
      <p class="help">
        An invitation is a one-time link, valid for 7 days. Whoever signs in and opens it joins {account} with its role, so send it
        only to the person it is meant for.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const address = email.trim()
          const ok = address === "" || looksLikeEmail(address)
          setInvalidEmail(!ok)
          if (ok) void invite.run({ role: choices.includes(role) ? role : "member", email: address })
        }}
      >
        <div class="fields">
          <div>
            <label for="invite-role">Role</label>
            <select id="invite-role" value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
              {choices.map((choice) => (
                <option key={choice} value={choice}>
                  {choice}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="invite-email">E-mail (optional)</label>
            <input
              id="invite-email"
              type="email"
              value={email}
              autoComplete="off"
              aria-invalid={invalidEmail}
              aria-describedby="invite-email-help"
              onInput={(event) => setEmail(event.currentTarget.value)}
            />
            <p id="invite-email-help" class={invalidEmail ? "field-error" : "help"}>
              {invalidEmail ? "This is not an e-mail address." : "Shown with the invitation, to remember whom it is for; nothing is sent."}
            </p>
          </div>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={invite.busy}>
            {invite.busy ? "Inviting…" : "Create invitation"}
          </button>
        </div>
      </form>
      <ErrorNotice error={invite.error} context="The invitation could not be made" />
      <div aria-live="polite">
        {made !== undefined && (
          <>
            <Success>
              Invitation for {made.email ?? "anyone with the link"} as <strong>{made.role}</strong> made; it expires{" "}
              <When value={made.expires_at} />.
            </Success>
            <OneTimeValue
              label="Invitation link"
              value={made.url}
              note="Shown only now: copy the link and send it to the invitee. It cannot be shown again; if it is lost, withdraw the invitation and make a new one."
            />
          </>
        )}
      </div>

      <h3>Waiting</h3>
      <ErrorNotice error={waiting.error} context="The invitations could not be read" />
      {invitations === undefined ? waiting.loading && <Loading /> : invitations.length === 0 ? (
        <p class="muted">No invitation is waiting.</p>
      ) : (
        <TableWrap label="Waiting invitations table">
          <table>
            <thead>
              <tr>
                <th scope="col">For</th>
                <th scope="col">Role</th>
                <th scope="col">Invited by</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((invitation) => {
                const label = `for ${invitation.email ?? "anyone"} as ${invitation.role}`
                return (
                  <tr key={invitation.id} data-invitation={invitation.id}>
                    <td>{invitation.email ?? <span class="muted">anyone with the link</span>}</td>
                    <td>
                      <Badge tone={invitation.role === "member" ? "neutral" : "info"}>{invitation.role}</Badge>
                    </td>
                    <td>
                      <code>{invitation.created_by}</code>
                    </td>
                    <td>
                      <When value={invitation.expires_at} />
                    </td>
                    <td>
                      <button
                        type="button"
                        class="secondary small"
                        disabled={withdraw.busy}
                        onClick={() => void withdraw.run({ id: invitation.id, label })}
                      >
                        Withdraw<span class="visually-hidden"> the invitation {label}</span>
                      </button>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </TableWrap>
      )}
      <ErrorNotice error={withdraw.error} context="The invitation could not be withdrawn" />
      <div aria-live="polite">{withdrawn !== "" && <Success>{withdrawn}</Success>}</div>
    </section>
  )
}
