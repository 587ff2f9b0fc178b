/**
 * The members card of the account page: each member with their role. Owners
 * get a role select on every row; owners and admins a Remove button on the
 * rows they may remove; everyone a Leave button on their own row (roles.ts
 * decides which row gets what). Removing and leaving ask first.
 */
import { useState } from "preact/hooks"
import * as id from "../../api/ids"
import { call } from "../../api/runtime"
import { ConfirmDialog } from "../../components/ConfirmDialog"
import { Badge, ErrorNotice, Success, TableWrap } from "../../components/ui"
import { useAction } from "../../hooks"
import { memberActions, type Role } from "../../roles"
import { navigate } from "../../router"
import { useSession } from "../../session"

/** A member as `GET /accounts/{account}` lists them. */
export interface MemberRow {
  readonly user_id: string
  readonly name: string
  readonly role: Role
}

interface MembersProps {
  readonly account: string
  readonly members: ReadonlyArray<MemberRow> | undefined
  /** The signed-in user's role in the account. */
  readonly myRole: Role | undefined
  /** The members changed: read the account (and what depends on it) again. */
  readonly onChanged: () => void
}

/** The role select and its button on one row; the select keeps its choice until saved. */
const RoleControl = ({ member, choices, busy, onSave }: {
  readonly member: MemberRow
  readonly choices: ReadonlyArray<Role>
  readonly busy: boolean
  readonly onSave: (role: Role) => void
}) => {
  const [role, setRole] = useState<Role>(member.role)
  const selectId = `role-${member.user_id}`
  return (
    <div class="inline nowrap">
      <label for={selectId} class="visually-hidden">
        Role of {member.name}
      </label>
      <select id={selectId} class="compact" value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
        {choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
      <button type="button" class="secondary small" disabled={busy || role === member.role} onClick={() => onSave(role)}>
        Set role<span class="visually-hidden"> of {member.name}</span>
      </button>
    </div>
  )
}

export const Members = ({ account, members, myRole, onChanged }: MembersProps) => {
  const { state, refreshAccounts } = useSession()
  const me = state.status === "signed-in" ? state.session.user.id : ""
  const [removing, setRemoving] = useState<MemberRow | undefined>(undefined)
  const [done, setDone] = useState("")

  const path = (user: string) => ({ account: id.account(account), user: id.user(user) })

  const change = useAction(async (member: MemberRow, role: Role) => {
    setDone("")
    await call((client) => client.accounts.setMember({ path: path(member.user_id), payload: { role } }))
    // The user's own role decides what the page offers: the session reads it again.
    if (member.user_id === me) await refreshAccounts()
    onChanged()
    setDone(`${member.name} is now ${role}.`)
  })

  const remove = useAction(async (member: MemberRow) => {
    setDone("")
    await call((client) => client.accounts.removeMember({ path: path(member.user_id) }))
    if (member.user_id === me) {
      // Having left, the user has nothing more to see here.
      navigate("/")
      await refreshAccounts()
      return
    }
    onChanged()
    setDone(`${member.name} was removed from ${account}.`)
  })

  const rows = (members ?? []).map((member) => ({ member, actions: memberActions({ id: me, role: myRole }, member) }))
  const withActions = rows.some((row) => row.actions.removal !== undefined)
  const leaving = removing !== undefined && removing.user_id === me

  return (
    <section aria-labelledby="members-heading" class="card">
      <h2 id="members-heading">Members</h2>
      {members !== undefined && (
        <TableWrap label="Members table">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">User id</th>
                <th scope="col">Role</th>
                {withActions && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {rows.map(({ member, actions }) => (
                <tr key={`${member.user_id}:${member.role}`} data-member={member.user_id}>
                  <td>{member.name}</td>
                  <td>
                    <code>{member.user_id}</code>
                  </td>
                  <td>
                    {actions.roles.length > 0 ? (
                      <RoleControl member={member} choices={actions.roles} busy={change.busy} onSave={(role) => void change.run(member, role)} />
                    ) : (
                      <Badge tone={member.role === "member" ? "neutral" : "info"}>{member.role}</Badge>
                    )}
                  </td>
                  {withActions && (
                    <td>
                      {actions.removal !== undefined && (
                        <button type="button" class="secondary small" disabled={remove.busy} onClick={() => setRemoving(member)}>
                          {actions.removal === "leave" ? "Leave" : "Remove"}
                          <span class="visually-hidden">
                            {actions.removal === "leave" ? ` account ${account}` : ` ${member.name}`}
                          </span>
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <ErrorNotice error={change.error} context="The role could not be changed" />
      <ErrorNotice error={remove.error} context={leaving ? "You could not leave the account" : "The member could not be removed"} />
      <div aria-live="polite">{done !== "" && <Success>{done}</Success>}</div>
      <ConfirmDialog
        open={removing !== undefined}
        title={leaving ? `Leave ${account}?` : `Remove ${removing?.name ?? ""}?`}
        confirmLabel={leaving ? "Leave account" : "Remove member"}
        danger
        onCancel={() => setRemoving(undefined)}
        onConfirm={() => {
          const member = removing
          setRemoving(undefined)
          if (member !== undefined) void remove.run(member)
        }}
      >
        <p>
          {leaving
            ? `You lose access to ${account} and its agents, deployments and conversations. Only an invitation brings you back.`
            : `${removing?.name ?? ""} (${removing?.user_id ?? ""}) loses access to ${account} at once.`}
        </p>
      </ConfirmDialog>
    </section>
  )
}
