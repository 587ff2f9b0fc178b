/**
 * The audit log card of the account page (owners and admins): who did what
 * and when, newest first, twenty entries a page with Newer and Older.
 */
import { useEffect, useState } from "preact/hooks"
import * as id from "../../api/ids"
import { call } from "../../api/runtime"
import { Badge, ErrorNotice, Loading, TableWrap, When } from "../../components/ui"
import { useResource } from "../../hooks"

const pageSize = 20

interface AuditLogProps {
  readonly account: string
  /** Changes whenever the page changed something, so that the log shows it. */
  readonly version: number
}

export const AuditLog = ({ account, version }: AuditLogProps) => {
  const [offset, setOffset] = useState(0)
  useEffect(() => setOffset(0), [account])
  const page = useResource(
    (signal) =>
      call((client) => client.accounts.audit({ path: { account: id.account(account) }, urlParams: { limit: pageSize, offset } }), signal),
    [account, offset, version]
  )
  const data = page.data
  const first = data === undefined || data.entries.length === 0 ? 0 : data.offset + 1
  const last = data === undefined ? 0 : data.offset + data.entries.length

  return (
    <section aria-labelledby="audit-heading" class="card">
      <h2 id="audit-heading">Audit log</h2>
      <ErrorNotice error={page.error} context="The audit log could not be read" />
      {data === undefined ? page.loading && <Loading /> : (
        <>
          <p role="status" aria-live="polite" class="muted">
            {data.total === 0 ? "Nothing recorded yet." : `Entries ${first}–${last} of ${data.total}, newest first.`}
          </p>
          {data.entries.length > 0 && (
            <TableWrap label="Audit log table">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">Action</th>
                    <th scope="col">Details</th>
                  </tr>
                </thead>
                <tbody>
                  {data.entries.map((entry) => (
                    <tr key={entry.id}>
                      <td class="nowrap">
                        <When value={entry.at} precise />
                      </td>
                      <td>
                        <code>{entry.actor}</code>
                      </td>
                      <td>
                        <Badge tone="info">{entry.action}</Badge>
                      </td>
                      <td>{entry.details}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          {data.total > pageSize && (
            <nav class="pager" aria-label="Audit log pages">
              <button type="button" class="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - pageSize))}>
                Newer
              </button>
              <span>
                Page {Math.floor(offset / pageSize) + 1} of {Math.ceil(data.total / pageSize)}
              </span>
              <button type="button" class="secondary" disabled={offset + pageSize >= data.total} onClick={() => setOffset(offset + pageSize)}>
                Older
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  )
}
