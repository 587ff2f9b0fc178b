/**
 * The danger zone of the account page (owners): deleting the account with
 * everything of it. The dialog asks for the account's name to be typed, so
 * that a slip of the finger cannot do it. The server refuses while anything
 * of the account runs (409 `account_busy`), with a sentence that says what.
 */
import { useState } from "preact/hooks"
import * as id from "../../api/ids"
import { call } from "../../api/runtime"
import { ConfirmDialog } from "../../components/ConfirmDialog"
import { ErrorNotice } from "../../components/ui"
import { useAction } from "../../hooks"
import { navigate } from "../../router"
import { useSession } from "../../session"

export const DeleteAccount = ({ account }: { readonly account: string }) => {
  const { refreshAccounts } = useSession()
  const [confirming, setConfirming] = useState(false)
  const [typed, setTyped] = useState("")
  const remove = useAction(async () => {
    await call((client) => client.accounts.remove({ path: { account: id.account(account) } }))
    // The account page has nothing left to show; the navigation must forget the account too.
    navigate("/")
    await refreshAccounts()
  })
  const matches = typed.trim() === account

  return (
    <section aria-labelledby="danger-heading" class="card danger-zone">
      <h2 id="danger-heading">Delete account</h2>
      <p>
        Deletes {account} with its members, invitations and audit log, its agents and builds, and every deployment by it or of
        its agents with their conversations, files and traces. This cannot be undone. Undeploy what runs first.
      </p>
      <button
        type="button"
        class="danger"
        disabled={remove.busy}
        onClick={() => {
          setTyped("")
          setConfirming(true)
        }}
      >
        {remove.busy ? "Deleting…" : "Delete account…"}
      </button>
      <ErrorNotice error={remove.error} context="The account could not be deleted" />
      <ConfirmDialog
        open={confirming}
        title={`Delete ${account}?`}
        confirmLabel="Delete account"
        danger
        confirmDisabled={!matches}
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false)
          void remove.run()
        }}
      >
        <p>Everything of {account} is deleted for good.</p>
        <label for="delete-confirm">
          Type <code>{account}</code> to confirm
        </label>
        <input
          id="delete-confirm"
          value={typed}
          autoComplete="off"
          spellcheck={false}
          onInput={(event) => setTyped(event.currentTarget.value)}
        />
      </ConfirmDialog>
    </section>
  )
}
