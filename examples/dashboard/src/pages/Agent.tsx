/**
 * An agent: its builds (published versions for everyone, every build with
 * its validation warnings for members), its readme as Markdown, publishing a
 * build (owner or admin) and deploying it.
 */
import type { Agent } from "@hosting/core"
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

const DeployForm = ({ account, name, versions }: {
  readonly account: string
  readonly name: string
  readonly versions: ReadonlyArray<Version>
}) => {
  const { state } = useSession()
  const targets = state.status === "signed-in" ? state.accounts.filter((a) => a.role === "owner" || a.role === "admin") : []
  const [what, setWhat] = useState("latest")
  const [into, setInto] = useState(targets.some((t) => t.name === account) ? account : (targets[0]?.name ?? ""))
  const deploy = useAction(async () => {
    const payload = what === "latest"
      ? {}
      : what.startsWith("version:")
      ? { version: id.semver(what.slice("version:".length)) }
      : { build_id: id.build(what.slice("build:".length)) }
    return call((client) =>
      client.deployments.deploy({
        path: { account: id.account(account), name: id.agent(name) },
        payload: { ...payload, ...(into !== account ? { into: id.account(into) } : {}) }
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
          void deploy.run()
        }}
      >
        <div class="fields">
          <div>
            <label for="deploy-what">Build</label>
            <select id="deploy-what" value={what} onChange={(event) => setWhat(event.currentTarget.value)}>
              <option value="latest">Latest published version</option>
              {published.map((v) => (
                <option key={`v-${v.build_id}`} value={`version:${v.version}`}>
                  Version {v.version} ({v.build_id})
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
        <button type="submit" class="primary" disabled={deploy.busy}>
          {deploy.busy ? "Deploying…" : "Deploy"}
        </button>
      </form>
      <ErrorNotice error={deploy.error} context="Deploying failed" />
      {deployed !== undefined && (
        <Success>
          Deployed build <code>{deployed.build_id}</code> into namespace <code>{deployed.namespace}</code> (deployment{" "}
          <code>{deployed.id}</code>, {deployed.status}).{" "}
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
        <Warnings warnings={version.validation_warnings} />
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
          {state.status === "signed-in" && <DeployForm account={account} name={name} versions={versions} />}
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
