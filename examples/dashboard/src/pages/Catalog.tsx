/**
 * The public catalog: agents with at least one published version, searched
 * by name (`account/agent`), a page at a time.
 */
import { useEffect, useState } from "preact/hooks"
import { isAccountName, isAgentName } from "../api/ids"
import { call } from "../api/runtime"
import { ErrorNotice, Loading, PageHeading, When } from "../components/ui"
import { useResource } from "../hooks"
import { Link, navigate, pathOf } from "../router"

const pageSize = 20

export const CatalogPage = ({ query }: { readonly query: URLSearchParams }) => {
  const q = query.get("q") ?? ""
  const offset = Math.max(0, Number.parseInt(query.get("offset") ?? "0", 10) || 0)
  const [text, setText] = useState(q)
  useEffect(() => setText(q), [q])

  const agents = useResource(
    (signal) =>
      call(
        (client) =>
          client.publicAgents.list({
            urlParams: { ...(q.trim() === "" ? {} : { q: q.trim() }), limit: pageSize, offset }
          }),
        signal
      ),
    [q, offset]
  )

  // Searching as one types, once the typing pauses.
  useEffect(() => {
    if (text === q) return
    const timer = window.setTimeout(() => navigate(text.trim() === "" ? "/" : `/?q=${encodeURIComponent(text.trim())}`, { replace: true }), 300)
    return () => window.clearTimeout(timer)
  }, [text, q])

  const to = (nextOffset: number) => {
    const params = new URLSearchParams()
    if (q !== "") params.set("q", q)
    if (nextOffset > 0) params.set("offset", String(nextOffset))
    const search = params.toString()
    navigate(search === "" ? "/" : `/?${search}`)
  }

  const page = agents.data
  return (
    <>
      <PageHeading title="Catalog">Agent catalog</PageHeading>
      <form
        role="search"
        class="search"
        onSubmit={(event) => {
          event.preventDefault()
          navigate(text.trim() === "" ? "/" : `/?q=${encodeURIComponent(text.trim())}`)
        }}
      >
        <label for="catalog-search">Search agents by name</label>
        <div class="inline">
          <input
            id="catalog-search"
            type="search"
            placeholder="account/agent"
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
          />
          <button type="submit" class="primary">
            Search
          </button>
        </div>
      </form>
      <OpenAgent />
      <ErrorNotice error={agents.error} context="The catalog could not be read" />
      {agents.loading && page === undefined && <Loading />}
      {page !== undefined && (
        <section aria-labelledby="results-heading">
          <h2 id="results-heading" class="visually-hidden">
            Results
          </h2>
          <p role="status" aria-live="polite" class="muted">
            {page.total === 0
              ? q === "" ? "No published agents yet." : `No agent matches “${q}”.`
              : `${page.total} agent${page.total === 1 ? "" : "s"}${q === "" ? "" : ` matching “${q}”`}`}
          </p>
          <ul class="cards" aria-busy={agents.loading}>
            {page.agents.map((agent) => (
              <li key={`${agent.account}/${agent.name}`} class="card agent-card">
                <h3>
                  <Link href={pathOf("agents", agent.account, agent.name)}>
                    <span class="muted">{agent.account}/</span>
                    {agent.name}
                  </Link>
                </h3>
                {agent.description !== undefined && <p>{agent.description}</p>}
                <dl class="facts">
                  <div>
                    <dt>Latest</dt>
                    <dd>{agent.latest_version}</dd>
                  </div>
                  <div>
                    <dt>Versions</dt>
                    <dd>{agent.versions_count}</dd>
                  </div>
                  <div>
                    <dt>Published</dt>
                    <dd>
                      <When value={agent.published_at} />
                    </dd>
                  </div>
                </dl>
              </li>
            ))}
          </ul>
          {page.total > pageSize && (
            <nav class="pager" aria-label="Catalog pages">
              <button type="button" class="secondary" disabled={offset === 0} onClick={() => to(Math.max(0, offset - pageSize))}>
                Previous
              </button>
              <span>
                {offset + 1}–{Math.min(offset + page.agents.length, page.total)} of {page.total}
              </span>
              <button type="button" class="secondary" disabled={offset + pageSize >= page.total} onClick={() => to(offset + pageSize)}>
                Next
              </button>
            </nav>
          )}
        </section>
      )}
    </>
  )
}

/** Goes straight to an agent by its name, published or not (members see every build there). */
const OpenAgent = () => {
  const [value, setValue] = useState("")
  const [invalid, setInvalid] = useState(false)
  return (
    <details class="open-agent">
      <summary>Open an agent by name</summary>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const [account, name, ...rest] = value.trim().split("/")
          const ok = rest.length === 0 && account !== undefined && name !== undefined &&
            isAccountName(account) && isAgentName(name)
          setInvalid(!ok)
          if (ok) navigate(pathOf("agents", account!, name!))
        }}
      >
        <label for="open-agent">Agent (account/name)</label>
        <div class="inline">
          <input
            id="open-agent"
            value={value}
            placeholder="acme/helper"
            aria-invalid={invalid}
            aria-describedby={invalid ? "open-agent-error" : undefined}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
          <button type="submit" class="secondary">
            Open
          </button>
        </div>
        {invalid && (
          <p id="open-agent-error" class="field-error">
            Write it as account/name, for example acme/helper.
          </p>
        )}
      </form>
    </details>
  )
}
