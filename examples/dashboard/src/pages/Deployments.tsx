/**
 * The deployments of an agent that the user's accounts made: the history
 * with statuses, and for one deployment its ConfigMap data, a pod restart
 * and, for the running one, a rollback (each after a confirmation), and its
 * settings (what a message does while a reply still streams).
 */
import type { Deployment } from "@hosting/core"
import { useEffect, useState } from "preact/hooks"
import * as id from "../api/ids"
import { call } from "../api/runtime"
import { ConfirmDialog } from "../components/ConfirmDialog"
import { Badge, ErrorNotice, KeyValueRows, Loading, PageHeading, Success, TableWrap, When } from "../components/ui"
import { useAction } from "../hooks"
import { useResource } from "../hooks"
import { Link, navigate, pathOf } from "../router"

/** A live deployment follows its rollout (pending, progressing, available, failed); `running` is what records said before. */
const statusTone = (status: string) =>
  status === "available" || status === "running"
    ? "ok"
    : status === "failed"
    ? "error"
    : status === "superseded"
    ? "neutral"
    : status === "undeployed"
    ? "warn"
    : "info"

/** The status badge, with the cluster's reason beside it and its message on hover. */
const StatusBadge = ({ deployment }: { readonly deployment: Deployment.Deployment }) => (
  <span title={deployment.status_message}>
    <Badge tone={statusTone(deployment.status)}>{deployment.status}</Badge>
    {deployment.status_reason !== undefined && <span class="muted"> {deployment.status_reason}</span>}
  </span>
)

const ConfigMapViewer = ({ deployment }: { readonly deployment: Deployment.Deployment }) => {
  const [name, setName] = useState(`${deployment.agent_name}-config`)
  const read = useAction((cmname: string) =>
    call((client) =>
      client.deployments.configMap({
        path: { namespace: deployment.namespace, cmname },
        urlParams: { account: id.account(deployment.account) }
      })
    )
  )
  useEffect(() => {
    read.reset()
    const initial = `${deployment.agent_name}-config`
    setName(initial)
    void read.run(initial)
  }, [deployment.id])
  const data = read.result
  return (
    <section aria-labelledby="configmap-heading" class="card">
      <h3 id="configmap-heading">ConfigMap</h3>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          if (name.trim() !== "") void read.run(name.trim())
        }}
      >
        <label for="configmap-name">Name in namespace {deployment.namespace}</label>
        <div class="inline">
          <input id="configmap-name" value={name} onInput={(event) => setName(event.currentTarget.value)} />
          <button type="submit" class="secondary" disabled={read.busy}>
            Show
          </button>
        </div>
      </form>
      <ErrorNotice error={read.error} context="The ConfigMap could not be read" />
      {data !== undefined && read.error === undefined && (
        Object.keys(data.data).length === 0 ? <p class="muted">{data.name} holds no data.</p> : (
          <TableWrap label={`Data of ConfigMap ${data.name} table`}>
            <table class="configmap">
              <caption>
                {data.namespace}/{data.name}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <KeyValueRows entries={Object.entries(data.data)} />
            </table>
          </TableWrap>
        )
      )}
    </section>
  )
}

const PodRestart = ({ deployment }: { readonly deployment: Deployment.Deployment }) => {
  const [pod, setPod] = useState("")
  const [confirming, setConfirming] = useState(false)
  const restart = useAction((name: string) =>
    call((client) =>
      client.deployments.restartPod({
        path: { namespace: deployment.namespace, pod: name },
        urlParams: { account: id.account(deployment.account) }
      })
    )
  )
  useEffect(() => restart.reset(), [deployment.id])
  return (
    <section aria-labelledby="restart-heading" class="card">
      <h3 id="restart-heading">Restart a pod</h3>
      <p class="help">The pod is deleted and the cluster starts a new one in its place.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          if (pod.trim() !== "") setConfirming(true)
        }}
      >
        <label for="pod-name">Pod name</label>
        <div class="inline">
          <input id="pod-name" value={pod} required placeholder={`${deployment.agent_name}-…`} onInput={(event) => setPod(event.currentTarget.value)} />
          <button type="submit" class="danger" disabled={restart.busy}>
            {restart.busy ? "Restarting…" : "Restart…"}
          </button>
        </div>
      </form>
      <ConfirmDialog
        open={confirming}
        title="Restart the pod?"
        confirmLabel="Restart pod"
        danger
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false)
          void restart.run(pod.trim())
        }}
      >
        <p>
          Pod <code>{pod.trim()}</code> in namespace <code>{deployment.namespace}</code> will be deleted; requests it is serving are cut.
        </p>
      </ConfirmDialog>
      <ErrorNotice error={restart.error} context="The restart failed" />
      {restart.result !== undefined && (
        <Success>
          Pod <code>{restart.result.pod}</code>: {restart.result.status}.
        </Success>
      )}
    </section>
  )
}

/** The build a rollback of `deployment` returns to: the newest before it in its namespace that differs (the server decides the same). */
const buildBefore = (deployment: Deployment.Deployment, history: ReadonlyArray<Deployment.Deployment>) => {
  const at = history.findIndex((d) => d.id === deployment.id)
  return history.slice(at + 1).find((d) => d.namespace === deployment.namespace && d.build_id !== deployment.build_id)?.build_id
}

const Rollback = ({ deployment, history, done }: {
  readonly deployment: Deployment.Deployment
  readonly history: ReadonlyArray<Deployment.Deployment>
  readonly done: (made: Deployment.Deployment) => void
}) => {
  const [confirming, setConfirming] = useState(false)
  const rollback = useAction(() => call((client) => client.deployments.rollback({ path: { deploymentId: deployment.id }, payload: {} })))
  useEffect(() => rollback.reset(), [deployment.id])
  const target = buildBefore(deployment, history)
  return (
    <section aria-labelledby="rollback-heading" class="card">
      <h3 id="rollback-heading">Roll back</h3>
      {target === undefined
        ? <p class="muted">Namespace {deployment.namespace} ran no other build before this one.</p>
        : (
          <>
            <p class="help">
              Deploys build <code>{target}</code> again, the one that ran before <code>{deployment.build_id}</code>, as a new deployment.
            </p>
            <button type="button" class="danger" disabled={rollback.busy} onClick={() => setConfirming(true)}>
              {rollback.busy ? "Rolling back…" : "Roll back…"}
            </button>
          </>
        )}
      <ConfirmDialog
        open={confirming}
        title="Roll back the deployment?"
        confirmLabel={`Roll back to ${target ?? ""}`}
        danger
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false)
          void rollback.run().then((made) => made !== undefined && done(made))
        }}
      >
        <p>
          The agent's pods in <code>{deployment.namespace}</code> are replaced by build <code>{target}</code>; conversations stay.
        </p>
      </ConfirmDialog>
      <ErrorNotice error={rollback.error} context="The rollback failed" />
    </section>
  )
}

/** The strategies for a message sent while a reply streams, as the settings card offers them. */
const concurrentSendChoices: ReadonlyArray<readonly [Deployment.ConcurrentSend, string, string]> = [
  ["interrupt", "Interrupt the reply (default)", "the running reply stops, stored as cancelled, and the new message is answered"],
  ["queue", "Queue the message", "the new message waits; its reply starts when the running one ends"],
  ["reject", "Reject the message", "the send is refused (409 reply_in_progress) and nothing is stored"]
]

const Settings = ({ deployment, done }: { readonly deployment: Deployment.Deployment; readonly done: () => void }) => {
  const current = deployment.settings.concurrent_send
  const [choice, setChoice] = useState<Deployment.ConcurrentSend>(current)
  const save = useAction((concurrent_send: Deployment.ConcurrentSend) =>
    call((client) => client.deployments.updateSettings({ path: { deploymentId: deployment.id }, payload: { concurrent_send } }))
  )
  useEffect(() => save.reset(), [deployment.id])
  // The stored setting, once read again after a save (the notice of the save stays).
  useEffect(() => setChoice(current), [deployment.id, current])
  const explained = concurrentSendChoices.find(([value]) => value === choice)?.[2]
  return (
    <section aria-labelledby="settings-heading" class="card">
      <h3 id="settings-heading">Settings</h3>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          void save.run(choice).then((set) => set !== undefined && done())
        }}
      >
        <label for="concurrent-send">A message sent while a reply still streams</label>
        <div class="inline">
          <select
            id="concurrent-send"
            value={choice}
            onChange={(event) => setChoice(event.currentTarget.value as Deployment.ConcurrentSend)}
          >
            {concurrentSendChoices.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          <button type="submit" class="secondary" disabled={save.busy || choice === current}>
            {save.busy ? "Saving…" : "Save"}
          </button>
        </div>
        {explained !== undefined && <p class="help">With this setting {explained}. A sender may choose otherwise for one message.</p>}
      </form>
      <ErrorNotice error={save.error} context="The settings could not be saved" />
      {save.result !== undefined && save.error === undefined && (
        <Success>
          Messages sent while a reply streams: <code>{save.result.concurrent_send}</code>.
        </Success>
      )}
    </section>
  )
}

/** The env the deploy set over the spec's: plain values, and for secrets the name of the secret (never its value). */
const DeployEnv = ({ env }: { readonly env: NonNullable<Deployment.Deployment["env"]> }) => (
  <section aria-labelledby="deploy-env-heading" class="card">
    <h3 id="deploy-env-heading">Env set by the deploy</h3>
    <TableWrap label="Env set by the deploy table">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(env).map(([name, value]) => (
            <tr key={name}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>{typeof value === "string" ? <code>{value}</code> : <span>secret <code>{value.secret}</code></span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  </section>
)

export const DeploymentsPage = ({ account, name, selected }: { readonly account: string; readonly name: string; readonly selected: string | null }) => {
  const history = useResource(
    (signal) => call((client) => client.deployments.history({ path: { account: id.account(account), name: id.agent(name) } }), signal),
    [account, name]
  )
  const deployments = history.data?.deployments ?? []
  /** The deployment the last rollback made (the page selects it; the notice stays until another agent is shown). */
  const [rolledBack, setRolledBack] = useState<Deployment.Deployment | undefined>(undefined)
  useEffect(() => setRolledBack(undefined), [account, name])
  const chosen = deployments.find((d) => d.id === selected) ?? (selected === null ? deployments.find((d) => d.undeployed_at === null) : undefined)
  const select = (deploymentId: string) =>
    navigate(`${pathOf("agents", account, name, "deployments")}?deployment=${encodeURIComponent(deploymentId)}`, { replace: true })
  return (
    <>
      <PageHeading title={`Deployments of ${account}/${name}`}>
        Deployments of{" "}
        <Link href={pathOf("agents", account, name)}>
          {account}/{name}
        </Link>
      </PageHeading>
      <ErrorNotice error={history.error} context="The deployment history could not be read" />
      {rolledBack !== undefined && (
        <Success>
          Rolled {rolledBack.rolled_back_from} back to build <code>{rolledBack.build_id}</code> as <code>{rolledBack.id}</code>.
        </Success>
      )}
      {history.loading && history.data === undefined && <Loading />}
      {history.data !== undefined && (
        <section aria-labelledby="history-heading">
          <h2 id="history-heading">History ({history.data.count})</h2>
          {deployments.length === 0 ? <p class="muted">No deployment yet. Deploy from the agent's page.</p> : (
            <TableWrap label="Deployment history table">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Deployment</th>
                    <th scope="col">Status</th>
                    <th scope="col">Account</th>
                    <th scope="col">Build</th>
                    <th scope="col">Namespace</th>
                    <th scope="col">Deployed</th>
                    <th scope="col">Ended</th>
                    <th scope="col">Open</th>
                  </tr>
                </thead>
                <tbody>
                  {deployments.map((d) => (
                    <tr key={d.id} aria-current={chosen?.id === d.id ? "true" : undefined} class={chosen?.id === d.id ? "current" : ""}>
                      <th scope="row">
                        <button type="button" class="link-button" aria-pressed={chosen?.id === d.id} onClick={() => select(d.id)}>
                          {d.id}
                        </button>
                      </th>
                      <td>
                        <StatusBadge deployment={d} />
                        {d.rolled_back_from !== undefined && <span class="muted"> rollback of {d.rolled_back_from}</span>}
                      </td>
                      <td>{d.account}</td>
                      <td>
                        <code>{d.build_id}</code>
                      </td>
                      <td>
                        <code>{d.namespace}</code>
                      </td>
                      <td>
                        <When value={d.deployed_at} />
                      </td>
                      <td>
                        <When value={d.undeployed_at} />
                      </td>
                      <td class="nowrap">
                        <Link href={pathOf("deployments", d.id, "chat")}>Chat</Link> · <Link href={pathOf("deployments", d.id, "files")}>Files</Link>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
        </section>
      )}
      {chosen !== undefined && (
        <section aria-labelledby="selected-heading">
          <h2 id="selected-heading">
            Deployment <code>{chosen.id}</code>
          </h2>
          <p>
            Status: <StatusBadge deployment={chosen} />
            {chosen.status_message !== undefined && <span class="muted"> {chosen.status_message}</span>}
          </p>
          {chosen.env !== undefined && <DeployEnv env={chosen.env} />}
          <div class="grid-2">
            <ConfigMapViewer deployment={chosen} />
            <PodRestart deployment={chosen} />
            {chosen.undeployed_at === null && (
              <Rollback
                deployment={chosen}
                history={deployments}
                done={(made) => {
                  setRolledBack(made)
                  history.reload()
                  select(made.id)
                }}
              />
            )}
            <Settings deployment={chosen} done={() => history.reload()} />
          </div>
        </section>
      )}
    </>
  )
}
