/**
 * An invitation link (`/invitations/{code}`): what it is and an Accept
 * button. The code tells nothing before it is accepted, so the account and
 * role are known only then; the page goes to the account joined. A used,
 * withdrawn or expired code (404) and a user who is a member already (409)
 * get a sentence of their own beside the API's words.
 */
import { call, type Problem } from "../api/runtime"
import { ErrorNotice, PageHeading } from "../components/ui"
import { useAction } from "../hooks"
import { Link, navigate, pathOf } from "../router"
import { useSession } from "../session"

/** What to do next after a refusal the page knows. */
const advice = (problem: Problem | undefined) => {
  if (problem?.code === "invitation_not_found") {
    return "This invitation was used, withdrawn or has expired (invitations last 7 days). Ask whoever invited you for a new link."
  }
  if (problem?.code === "already_member") {
    return "You are a member of this account already, so there is nothing to accept; the invitation stays unused."
  }
  return undefined
}

export const InvitationPage = ({ code }: { readonly code: string }) => {
  const { state, refreshAccounts } = useSession()
  const accept = useAction(async () => {
    const joined = await call((client) => client.accounts.accept({ path: { code } }))
    await refreshAccounts()
    navigate(pathOf("accounts", joined.account))
    return joined
  })
  const next = advice(accept.error)
  const name = state.status === "signed-in" ? state.session.user.name : undefined

  return (
    <>
      <PageHeading title="Invitation">Invitation to an account</PageHeading>
      <section aria-labelledby="invitation-heading" class="card">
        <h2 id="invitation-heading">Join an account</h2>
        <p>
          Someone invited you to an account of this hosting service. Accepting makes you
          {name !== undefined && (
            <>
              {" "}(<strong>{name}</strong>)
            </>
          )}{" "}
          a member of it, with the role the invitation gives; the page then takes you to the account.
        </p>
        <p class="help">Not you? Sign out and open the link again as the right user.</p>
        <button type="button" class="primary" disabled={accept.busy} onClick={() => void accept.run()}>
          {accept.busy ? "Accepting…" : "Accept invitation"}
        </button>
        <div aria-live="polite">
          {next !== undefined && (
            <p class="notice notice-warn">
              {next} <Link href="/">Go to the catalog</Link>.
            </p>
          )}
        </div>
        <ErrorNotice error={accept.error} context="The invitation could not be accepted" />
      </section>
    </>
  )
}
