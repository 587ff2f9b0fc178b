/**
 * An account: its members and their roles, renaming it (owner or admin), its
 * agents, and its build events live from the account event stream. Owners
 * and admins also manage members, invitations (account/Invitations.tsx) and
 * secrets (account/Secrets.tsx: members see the names) and read the audit
 * log; owners may delete the account (account/DeleteAccount.tsx).
 *
 * Events are hints to refetch (docs/events.md): an `agent.build` event makes
 * the page read that agent again from the API; a `ready` with `resync: true`
 * (the server could not replay everything missed) makes it read everything
 * it shows again. The stream reconnects by itself with `Last-Event-ID`; the
 * indicator says when it is doing so.
 */
import { AccountEvents } from "@hosting/client"
import { Duration, Effect } from "effect"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import * as id from "../api/ids"
import { baseUrl, call, type Problem, subscribe } from "../api/runtime"
import { Badge, ErrorNotice, Loading, PageHeading, TableWrap, toDate, When } from "../components/ui"
import { useAction, useResource } from "../hooks"
import { asRole } from "../roles"
import { Link, navigate, pathOf } from "../router"
import { canManage, useSession } from "../session"
import { AuditLog } from "./account/AuditLog"
import { DeleteAccount } from "./account/DeleteAccount"
import { Invitations } from "./account/Invitations"
import { Members } from "./account/Members"
import { Secrets } from "./account/Secrets"

/** One agent of the account as the page shows it. */
interface AgentRow {
  readonly name: string
  readonly builds: number
  readonly latestVersion: string | undefined
  readonly newestBuild: string | undefined
  readonly lastStatus: string | undefined
}

/** A line of the event log. */
interface LoggedEvent {
  readonly key: string
  readonly at: Date
  readonly kind: string
  readonly text: string
}

type Connection =
  | { readonly state: "connecting" }
  | { readonly state: "live"; readonly since: Date }
  | { readonly state: "reconnecting"; readonly failures: number; readonly delayMs: number }
  | { readonly state: "stopped"; readonly problem: Problem }

const maxLogged = 50

const readAgent = async (account: string, name: string, lastStatus: string | undefined): Promise<AgentRow | undefined> => {
  try {
    const agent = await call((client) => client.publicAgents.get({ path: { account: id.account(account), name: id.agent(name) } }))
    const time = (value: unknown) => toDate(value)?.getTime() ?? 0
    const newest = [...agent.versions].sort((a, b) => time(b.registered_at) - time(a.registered_at))[0]
    const latest = agent.versions.filter((v) => v.version !== undefined).map((v) => v.version!)
    return {
      name,
      builds: agent.versions.length,
      latestVersion: latest.sort((a, b) => compareVersions(b, a))[0],
      newestBuild: newest?.build_id,
      lastStatus
    }
  } catch {
    return undefined
  }
}

const compareVersions = (a: string, b: string) => {
  const pa = a.split(".").map(Number)
  const pb = b.split(".").map(Number)
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

/** The account's agents that the catalog lists (published ones). */
const catalogAgents = async (account: string): Promise<ReadonlyArray<string>> => {
  const names: Array<string> = []
  for (let offset = 0; offset < 1000; offset += 200) {
    const page = await call((client) => client.publicAgents.list({ urlParams: { q: `${account}/`, limit: 200, offset } }))
    names.push(...page.agents.filter((a) => a.account === account).map((a) => a.name))
    if (offset + page.agents.length >= page.total) break
  }
  return names
}

const ConnectionIndicator = ({ connection, onRetry }: { readonly connection: Connection; readonly onRetry: () => void }) => {
  switch (connection.state) {
    case "connecting":
      return <Badge tone="info">Connecting…</Badge>
    case "live":
      return <Badge tone="ok">Live</Badge>
    case "reconnecting":
      return (
        <Badge tone="warn">
          Reconnecting{connection.failures > 0 ? ` (attempt ${connection.failures + 1})` : ""} in {Math.round(connection.delayMs / 1000)} s…
        </Badge>
      )
    case "stopped":
      return (
        <span class="inline">
          <Badge tone="error">Disconnected</Badge>
          <button type="button" class="link-button" onClick={onRetry}>
            Reconnect
          </button>
        </span>
      )
  }
}

const RenameForm = ({ account }: { readonly account: string }) => {
  const { refreshAccounts } = useSession()
  const [name, setName] = useState(account)
  const [invalid, setInvalid] = useState(false)
  const rename = useAction(async (value: string) => {
    const renamed = await call((client) => client.accounts.rename({ path: { account: id.account(account) }, payload: { name: id.account(value) } }))
    await refreshAccounts()
    navigate(pathOf("accounts", renamed.name), { replace: true })
  })
  return (
    <section aria-labelledby="rename-heading" class="card">
      <h2 id="rename-heading">Rename</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const value = name.trim()
          const ok = id.isAccountName(value)
          setInvalid(!ok)
          if (ok && value !== account) void rename.run(value)
        }}
      >
        <label for="account-name">New name</label>
        <div class="inline">
          <input
            id="account-name"
            value={name}
            aria-invalid={invalid}
            aria-describedby="account-name-help"
            onInput={(event) => setName(event.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={rename.busy}>
            {rename.busy ? "Renaming…" : "Rename"}
          </button>
        </div>
        <p id="account-name-help" class={invalid ? "field-error" : "help"}>
          Lowercase letters, digits and inner hyphens, up to 63 characters. Paths with the old name stop working.
        </p>
      </form>
      <ErrorNotice error={rename.error} context="Renaming failed" />
    </section>
  )
}

export const AccountPage = ({ account }: { readonly account: string }) => {
  const { state } = useSession()
  const details = useResource(
    (signal) => call((client) => client.accounts.get({ path: { account: id.account(account) } }), signal),
    [account]
  )
  const [agents, setAgents] = useState<ReadonlyArray<AgentRow> | undefined>(undefined)
  const [log, setLog] = useState<ReadonlyArray<LoggedEvent>>([])
  const [connection, setConnection] = useState<Connection>({ state: "connecting" })
  const [streamRound, setStreamRound] = useState(0)
  const statuses = useRef(new Map<string, string>())
  // Counts the changes made from this page (members, invitations), so that the audit log reads them.
  const [changes, setChanges] = useState(0)
  const changed = useCallback(() => {
    details.reload()
    setChanges((n) => n + 1)
  }, [details.reload])

  const refetchAgent = useCallback(async (name: string) => {
    const row = await readAgent(account, name, statuses.current.get(name))
    if (row === undefined) return
    setAgents((current) => {
      const rest = (current ?? []).filter((r) => r.name !== row.name)
      return [...rest, row].sort((a, b) => a.name.localeCompare(b.name))
    })
  }, [account])

  const refetchAgents = useCallback(async () => {
    const known = new Set([...(await catalogAgents(account).catch(() => [])), ...statuses.current.keys()])
    const rows = await Promise.all([...known].map((name) => readAgent(account, name, statuses.current.get(name))))
    setAgents(rows.filter((r): r is AgentRow => r !== undefined).sort((a, b) => a.name.localeCompare(b.name)))
  }, [account])

  useEffect(() => {
    setAgents(undefined)
    setLog([])
    statuses.current = new Map()
  }, [account])

  useEffect(() => {
    setConnection({ state: "connecting" })
    let first = true
    const stop = subscribe(
      AccountEvents.follow({
        baseUrl,
        account,
        onReconnect: (info) =>
          Effect.sync(() => setConnection({ state: "reconnecting", failures: info.failures, delayMs: Duration.toMillis(info.delay) }))
      }),
      {
        onItem: (event) => {
          const at = new Date()
          switch (event._tag) {
            case "Ready":
              setConnection({ state: "live", since: at })
              // The agents are read once the stream is up, so that no change falls between the read and the
              // stream; afterwards the stream resumes by itself and a resync asks to read everything again.
              if (first) void refetchAgents()
              else if (event.resync) {
                details.reload()
                void refetchAgents()
              }
              first = false
              return
            case "AgentBuild": {
              const name = event.agent.includes("/") ? event.agent.split("/")[1]! : event.agent
              const text = `${event.agent}: build ${event.build_id ?? "?"} ${event.status ?? "changed"}${event.version ? ` (${event.version})` : ""}`
              if (event.status !== undefined) statuses.current.set(name, event.status)
              setLog((current) => [{ key: event.id, at, kind: "agent.build", text }, ...current].slice(0, maxLogged))
              if (event.agent.startsWith(`${account}/`)) void refetchAgent(name)
              return
            }
            case "DeploymentChanged": {
              const text = `deployment ${event.deployment_id} of ${event.agent ?? "?"}: ${event.status ?? "changed"}`
              setLog((current) => [{ key: event.id, at, kind: "deployment.changed", text }, ...current].slice(0, maxLogged))
              return
            }
            default:
              return
          }
        },
        onError: (problem) => {
          setConnection({ state: "stopped", problem })
          // Without events the page still shows what the API says.
          if (first) void refetchAgents()
        },
        onEnd: () => setConnection({ state: "connecting" })
      }
    )
    return stop
  }, [account, streamRound])

  // What the page offers follows the session's role; the server decides again on every change.
  const manage = canManage(state, account)
  const myRole = state.status === "signed-in" ? asRole(state.accounts.find((a) => a.name === account)?.role) : undefined
  const data = details.data
  return (
    <>
      <PageHeading title={`Account ${account}`}>
        <span class="muted">Account </span>
        {account}
      </PageHeading>
      <ErrorNotice error={details.error} context="The account could not be read" />
      {details.loading && data === undefined && <Loading />}
      {data !== undefined && (
        <p>
          Created <When value={data.created_at} /> · your role: <Badge tone="info">{data.role}</Badge>
        </p>
      )}
      <Members account={account} members={data?.members} myRole={myRole} onChanged={changed} />
      {manage && <RenameForm account={account} />}
      {manage && <Invitations account={account} myRole={myRole} onChanged={changed} />}
      <Secrets account={account} manage={manage} onChanged={changed} />
      <section aria-labelledby="agents-heading" class="card">
        <h2 id="agents-heading">Agents</h2>
        {agents === undefined ? <Loading /> : agents.length === 0 ? (
          <p class="muted">No published agents yet; agents whose builds change while this page is open appear here.</p>
        ) : (
          <TableWrap label="Agents table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Builds</th>
                  <th scope="col">Latest version</th>
                  <th scope="col">Newest build</th>
                  <th scope="col">Last event</th>
                </tr>
              </thead>
              <tbody>
                {agents.map((row) => (
                  <tr key={row.name} data-agent={row.name}>
                    <th scope="row">
                      <Link href={pathOf("agents", account, row.name)}>{row.name}</Link>
                    </th>
                    <td>{row.builds}</td>
                    <td>{row.latestVersion ?? <span class="muted">none</span>}</td>
                    <td>
                      <code>{row.newestBuild ?? "—"}</code>
                    </td>
                    <td>{row.lastStatus ?? <span class="muted">—</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
      <section aria-labelledby="events-heading" class="card">
        <div class="section-head">
          <h2 id="events-heading">Live events</h2>
          <span aria-live="polite" class="connection">
            <ConnectionIndicator connection={connection} onRetry={() => setStreamRound((n) => n + 1)} />
          </span>
        </div>
        {connection.state === "stopped" && <ErrorNotice error={connection.problem} context="The event stream stopped" />}
        <div role="log" aria-label="Build events of the account" class="event-log">
          {log.length === 0 ? <p class="muted">No events since the page opened.</p> : (
            <ol>
              {log.map((entry) => (
                <li key={entry.key}>
                  <time dateTime={entry.at.toISOString()}>{entry.at.toLocaleTimeString()}</time> <Badge tone="info">{entry.kind}</Badge>{" "}
                  {entry.text}
                </li>
              ))}
            </ol>
          )}
        </div>
      </section>
      {manage && <AuditLog account={account} version={changes} />}
      {myRole === "owner" && <DeleteAccount account={account} />}
    </>
  )
}
