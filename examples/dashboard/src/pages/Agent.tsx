/**
 * An agent: its builds (published versions for everyone, every build with
 * its validation warnings for members), its readme as Markdown, publishing a
 * build, yanking a version and moving channels (owner or admin), and
 * deploying it by version, range or channel, optionally following it.
 */
import type { Agent } from "@hosting/core"
import type { ComponentChildren } from "preact"
import { useMemo, useState } from "preact/hooks"
import * as id from "../api/ids"
import { call } from "../api/runtime"
import { Markdown } from "../components/Markdown"
import { Badge, ErrorNotice, Loading, PageHeading, Success, toDate, When } from "../components/ui"
import { useAction, useResource } from "../hooks"
import { Link, pathOf } from "../router"
import { canManage, isMember, useSession } from "../session"

type Version = Agent.Version

const newestFirst = (a: Version, b: Version) => (toDate(b.registered_at)?.getTime() ?? 0) - (toDate(a.registered_at)?.getTime() ?? 0)

const Warnings = ({ warnings }: { readonly warnings: ReadonlyArray<Agent.ValidationWarning> }) =>
  warnings.length === 0 ? null : (
    <div class="warnings">
      <h4>
        {warnings.length} validation warning{warnings.length === 1 ? "" : "s"}
      </h4>
      <ul>
        {warnings.map((warning, index) => (
          <li key={index}>
            <code>{warning.path === "" ? "(spec)" : warning.path}</code> {warning.message} <span class="muted">({warning.code})</span>
          </li>
        ))}
      </ul>
    </div>
  )

const PublishForm = ({ account, name, build, onPublished }: {
  readonly account: string
  readonly name: string
  readonly build: string
  readonly onPublished: () => void
}) => {
  const [version, setVersion] = useState("")
  const [invalid, setInvalid] = useState(false)
  const publish = useAction(async (value: string) => {
    const done = await call((client) =>
      client.agents.publish({
        path: { account: id.account(account), name: id.agent(name) },
        payload: { build_id: id.build(build), version: id.semver(value) }
      })
    )
    onPublished()
    return done
  })
  const field = `publish-${build}`
  return (
    <form
      class="publish"
      onSubmit={(event) => {
        event.preventDefault()
        const ok = id.isSemVer(version.trim())
        setInvalid(!ok)
        if (ok) void publish.run(version.trim())
      }}
    >
      <label for={field}>Version to publish build {build} as</label>
      <div class="inline">
        <input
          id={field}
          value={version}
          placeholder="1.0.0"
          inputMode="decimal"
          aria-invalid={invalid}
          aria-describedby={invalid ? `${field}-error` : undefined}
          onInput={(event) => setVersion(event.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={publish.busy}>
          {publish.busy ? "Publishing…" : "Publish"}
        </button>
      </div>
      {invalid && (
        <p id={`${field}-error`} class="field-error">
          A version is major.minor.patch, for example 1.0.0.
        </p>
      )}
      <ErrorNotice error={publish.error} context="Publishing failed" />
    </form>
  )
}

/** A labelled text field checked on submit: when `invalid`, it says so and shows `children` as its error. */
const CheckedField = ({ id: field, label, value, placeholder, invalid, onInput, children }: {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly placeholder: string
  readonly invalid: boolean
  readonly onInput: (value: string) => void
  readonly children: ComponentChildren
}) => (
  <div>
    <label for={field}>{label}</label>
    <input
      id={field}
      value={value}
      placeholder={placeholder}
      aria-invalid={invalid}
      aria-describedby={invalid ? `${field}-error` : undefined}
      onInput={(event) => onInput(event.currentTarget.value)}
    />
    {invalid && (
      <p id={`${field}-error`} class="field-error">
        {children}
      </p>
    )}
  </div>
)

const DeployForm = ({ account, name, versions, channels }: {
  readonly account: string
  readonly name: string
  readonly versions: ReadonlyArray<Version>
  readonly channels: ReadonlyArray<Agent.Channel>
}) => {
  const { state } = useSession()
  const targets = state.status === "signed-in" ? state.accounts.filter((a) => a.role === "owner" || a.role === "admin") : []
  const [what, setWhat] = useState("latest")
  const [range, setRange] = useState("")
  const [follow, setFollow] = useState(false)
  const [into, setInto] = useState(targets.some((t) => t.name === account) ? account : (targets[0]?.name ?? ""))
  const [invalid, setInvalid] = useState(false)
  // A build or an exact version never moves: only latest, a channel or a range can be followed.
  const followable = what === "latest" || what === "range" || what.startsWith("channel:")
  const deploy = useAction(async () => {
    const payload = what === "latest"
      ? {}
      : what === "range"
      ? { version: id.range(range.trim()) }
      : what.startsWith("channel:")
      ? { channel: id.channel(what.slice("channel:".length)) }
      : what.startsWith("version:")
      ? { version: id.range(what.slice("version:".length)) }
      : { build_id: id.build(what.slice("build:".length)) }
    return call((client) =>
      client.deployments.deploy({
        path: { account: id.account(account), name: id.agent(name) },
        payload: { ...payload, ...(followable && follow ? { follow: true } : {}), ...(into !== account ? { into: id.account(into) } : {}) }
      })
    )
  })
  if (targets.length === 0) return null
  const published = versions.filter((v) => v.version !== undefined)
  const own = isMember(state, account)
  const deployed = deploy.result
  return (
    <section aria-labelledby="deploy-heading" class="card">
      <h2 id="deploy-heading">Deploy</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const bad = what === "range" && !id.isVersionRange(range.trim())
          setInvalid(bad)
          if (!bad) void deploy.run()
        }}
      >
        <div class="fields">
          <div>
            <label for="deploy-what">Build</label>
            <select id="deploy-what" value={what} onChange={(event) => setWhat(event.currentTarget.value)}>
              <option value="latest">Latest published version</option>
              {channels.filter((c) => !c.implicit).map((c) => (
                <option key={`c-${c.name}`} value={`channel:${c.name}`} disabled={c.yanked !== undefined}>
                  Channel {c.name} ({c.version}{c.yanked !== undefined ? ", yanked" : ""})
                </option>
              ))}
              <option value="range">A semver range…</option>
              {published.map((v) => (
                <option key={`v-${v.build_id}`} value={`version:${v.version}`} disabled={v.yanked !== undefined}>
                  Version {v.version} ({v.build_id}){v.yanked !== undefined ? " (yanked)" : ""}
                </option>
              ))}
              {own &&
                versions.filter((v) => v.version === undefined).map((v) => (
                  <option key={`b-${v.build_id}`} value={`build:${v.build_id}`}>
                    Build {v.build_id} (unpublished)
                  </option>
                ))}
            </select>
          </div>
          {what === "range" && (
            <CheckedField id="deploy-range" label="Range" value={range} placeholder="^1.2" invalid={invalid} onInput={setRange}>
              A version or semver range, for example 1.4.0, ^1.2, ~1.4.0 or &gt;=1 &lt;2.
            </CheckedField>
          )}
          <div>
            <label for="deploy-into">Into account</label>
            <select id="deploy-into" value={into} onChange={(event) => setInto(event.currentTarget.value)}>
              {targets.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                </option>
              ))}
            </select>
          </div>
        </div>
        {followable && (
          <div class="choice">
            <input id="deploy-follow" type="checkbox" checked={follow} onChange={(event) => setFollow(event.currentTarget.checked)} />
            <label for="deploy-follow">Follow it: roll forward when a newer match is published or the channel moves</label>
          </div>
        )}
        <button type="submit" class="primary" disabled={deploy.busy}>
          {deploy.busy ? "Deploying…" : "Deploy"}
        </button>
      </form>
      <ErrorNotice error={deploy.error} context="Deploying failed" />
      {deployed !== undefined && (
        <Success>
          Deployed build <code>{deployed.build_id}</code> into namespace <code>{deployed.namespace}</code> (deployment{" "}
          <code>{deployed.id}</code>, {deployed.status}
          {deployed.follow !== undefined && <>, following its {"range" in deployed.follow ? `range ${deployed.follow.range}` : `channel ${deployed.follow.channel}`}</>}).{" "}
          <Link href={pathOf("deployments", deployed.id, "chat")}>Chat with it</Link> ·{" "}
          <Link href={pathOf("deployments", deployed.id, "files")}>Files</Link> ·{" "}
          <Link href={`${pathOf("agents", account, name, "deployments")}?deployment=${encodeURIComponent(deployed.id)}`}>
            Deployment details
          </Link>
        </Success>
      )}
    </section>
  )
}

const YankForm = ({ account, name, version, onChanged }: {
  readonly account: string
  readonly name: string
  readonly version: Version
  readonly onChanged: () => void
}) => {
  const [reason, setReason] = useState("")
  const path = { account: id.account(account), name: id.agent(name), version: id.semver(version.version ?? "") }
  const change = useAction(async (yank: boolean) => {
    const done = await call((client) =>
      yank ? client.agents.yank({ path, payload: { reason: reason.trim() } }) : client.agents.unyank({ path })
    )
    onChanged()
    return done
  })
  const field = `yank-${version.build_id}`
  if (version.yanked !== undefined) {
    return (
      <div class="yank">
        <button type="button" disabled={change.busy} onClick={() => void change.run(false)}>
          {change.busy ? "Undoing…" : `Undo the yank of ${version.version}`}
        </button>
        <ErrorNotice error={change.error} context="Undoing the yank failed" />
      </div>
    )
  }
  return (
    <form
      class="yank"
      onSubmit={(event) => {
        event.preventDefault()
        if (reason.trim() !== "") void change.run(true)
      }}
    >
      <label for={field}>Yank {version.version}: why?</label>
      <div class="inline">
        <input id={field} value={reason} required maxLength={500} placeholder="a security fix is in 1.2.1" onInput={(event) => setReason(event.currentTarget.value)} />
        <button type="submit" class="danger" disabled={change.busy || reason.trim() === ""}>
          {change.busy ? "Yanking…" : "Yank"}
        </button>
      </div>
      <ErrorNotice error={change.error} context="Yanking failed" />
    </form>
  )
}

const ChannelsCard = ({ account, name, channels, versions, manage, onChanged }: {
  readonly account: string
  readonly name: string
  readonly channels: ReadonlyArray<Agent.Channel>
  readonly versions: ReadonlyArray<Version>
  readonly manage: boolean
  readonly onChanged: () => void
}) => {
  const [channel, setChannel] = useState("")
  const installable = versions.filter((v) => v.version !== undefined && v.yanked === undefined)
  const [version, setVersion] = useState("")
  const [invalid, setInvalid] = useState(false)
  const path = (c: string) => ({ account: id.account(account), name: id.agent(name), channel: id.channel(c) })
  const set = useAction(async () => {
    const done = await call((client) =>
      client.agents.setChannel({ path: path(channel.trim()), payload: { version: id.semver(version || (installable[0]?.version ?? "")) } })
    )
    onChanged()
    return done
  })
  const remove = useAction(async (c: string) => {
    const done = await call((client) => client.agents.removeChannel({ path: path(c) }))
    onChanged()
    return done
  })
  if (channels.length === 0 && !manage) return null
  return (
    <section aria-labelledby="channels-heading" class="card">
      <h2 id="channels-heading">Channels</h2>
      {channels.length === 0 ? <p class="muted">Nothing is published yet.</p> : (
        <table>
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col">Version</th>
              <th scope="col">Build</th>
              <th scope="col">Moved</th>
              {manage && <th scope="col"><span class="visually-hidden">Actions</span></th>}
            </tr>
          </thead>
          <tbody>
            {channels.map((c) => (
              <tr key={c.name}>
                <td>
                  {c.name} {c.implicit && <span class="muted">(implicit)</span>} {c.yanked !== undefined && <Badge tone="error">yanked</Badge>}
                </td>
                <td>{c.version}</td>
                <td>
                  <code>{c.build_id}</code>
                </td>
                <td>{c.updated_at === undefined ? "-" : <When value={c.updated_at} />}</td>
                {manage && (
                  <td>
                    {!c.implicit && (
                      <button type="button" disabled={remove.busy} onClick={() => void remove.run(c.name)} aria-label={`Remove channel ${c.name}`}>
                        Remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorNotice error={remove.error} context="Removing the channel failed" />
      {manage && installable.length > 0 && (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            const ok = id.isChannelName(channel.trim()) && channel.trim() !== "latest"
            setInvalid(!ok)
            if (ok) void set.run()
          }}
        >
          <div class="fields">
            <CheckedField id="channel-name" label="Channel" value={channel} placeholder="stable" invalid={invalid} onInput={setChannel}>
              A channel is lowercase letters, digits and hyphens, starting with a letter; latest is implicit.
            </CheckedField>
            <div>
              <label for="channel-version">Version</label>
              <select id="channel-version" value={version || installable[0]?.version} onChange={(event) => setVersion(event.currentTarget.value)}>
                {installable.map((v) => (
                  <option key={v.build_id} value={v.version}>
                    {v.version}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <button type="submit" class="primary" disabled={set.busy}>
            {set.busy ? "Moving…" : "Set channel"}
          </button>
          <ErrorNotice error={set.error} context="Setting the channel failed" />
        </form>
      )}
    </section>
  )
}

const BuildCard = ({ account, name, version, manage, latest, onPublished }: {
  readonly account: string
  readonly name: string
  readonly version: Version
  readonly manage: boolean
  readonly latest: boolean
  readonly onPublished: () => void
}) => {
  const description = typeof version.spec["description"] === "string" ? version.spec["description"] : undefined
  return (
    <li class="card build">
      <article aria-labelledby={`build-${version.build_id}`}>
        <header class="build-header">
          <h3 id={`build-${version.build_id}`}>
            {version.version !== undefined ? `Version ${version.version}` : "Unpublished build"} <code class="build-id">{version.build_id}</code>
          </h3>
          {version.version !== undefined ? <Badge tone="ok">published</Badge> : <Badge tone="neutral">not published</Badge>}
          {version.yanked !== undefined && <Badge tone="error">yanked</Badge>}
          {version.validation_warnings.length > 0 && <Badge tone="warn">
              {version.validation_warnings.length} warning{version.validation_warnings.length === 1 ? "" : "s"}
            </Badge>}
        </header>
        {description !== undefined && <p>{description}</p>}
        <dl class="facts">
          <div>
            <dt>Registered</dt>
            <dd>
              <When value={version.registered_at} />
            </dd>
          </div>
          {version.published_at !== undefined && (
            <div>
              <dt>Published</dt>
              <dd>
                <When value={version.published_at} />
              </dd>
            </div>
          )}
        </dl>
        {version.yanked !== undefined && (
          <p class="yanked">
            Yanked <When value={version.yanked.yanked_at} />: {version.yanked.reason}
          </p>
        )}
        <Warnings warnings={version.validation_warnings} />
        {manage && version.version !== undefined && <YankForm account={account} name={name} version={version} onChanged={onPublished} />}
        {manage && version.version === undefined && (
          <PublishForm account={account} name={name} build={version.build_id} onPublished={onPublished} />
        )}
        <details open={latest}>
          <summary>Readme</summary>
          <Markdown text={version.readme} />
        </details>
      </article>
    </li>
  )
}

export const AgentPage = ({ account, name }: { readonly account: string; readonly name: string }) => {
  const { state } = useSession()
  const agent = useResource(
    (signal) => call((client) => client.publicAgents.get({ path: { account: id.account(account), name: id.agent(name) } }), signal),
    [account, name, state.status]
  )
  const channels = useResource(
    (signal) => call((client) => client.publicAgents.channels({ path: { account: id.account(account), name: id.agent(name) } }), signal),
    [account, name, state.status, agent.data]
  )
  const versions = useMemo(() => [...(agent.data?.versions ?? [])].sort(newestFirst), [agent.data])
  const member = isMember(state, account)
  const manage = canManage(state, account)
  const latestPublished = versions.find((v) => v.version !== undefined)?.build_id ?? versions[0]?.build_id
  return (
    <>
      <PageHeading title={`${account}/${name}`}>
        <span class="muted">{account}/</span>
        {name}
      </PageHeading>
      {state.status === "signed-in" && (
        <nav aria-label="Agent" class="subnav">
          {member && <Link href={pathOf("accounts", account)}>Account {account}</Link>}
          <Link href={pathOf("agents", account, name, "deployments")}>Deployments</Link>
          <Link href={pathOf("agents", account, name, "traces")}>Traces</Link>
        </nav>
      )}
      <ErrorNotice error={agent.error} context="The agent could not be read" />
      {agent.loading && agent.data === undefined && <Loading />}
      {agent.data !== undefined && (
        <>
          <p>
            Registry <code>{agent.data.registry}</code> · {versions.length} build{versions.length === 1 ? "" : "s"}
            {!member && " (published versions)"}
          </p>
          {state.status === "signed-in" && (
            <DeployForm account={account} name={name} versions={versions} channels={channels.data?.channels ?? []} />
          )}
          <ChannelsCard
            account={account}
            name={name}
            channels={channels.data?.channels ?? []}
            versions={versions}
            manage={manage}
            onChanged={agent.reload}
          />
          <section aria-labelledby="builds-heading">
            <h2 id="builds-heading">{member ? "Builds" : "Versions"}</h2>
            {versions.length === 0 ? <p class="muted">No builds to show.</p> : (
              <ul class="builds">
                {versions.map((version) => (
                  <BuildCard
                    key={version.build_id}
                    account={account}
                    name={name}
                    version={version}
                    manage={manage}
                    latest={version.build_id === latestPublished}
                    onPublished={agent.reload}
                  />
                ))}
              </ul>
            )}
          </section>
        </>
      )}
    </>
  )
}
