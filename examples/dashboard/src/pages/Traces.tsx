/**
 * An agent's traces: a table filtered by status, model and time window, a
 * page at a time (newest first), each trace opening its span waterfall; the
 * latency of the page's traces over time, the error rate of the whole
 * window, and the server's p50, p95 and error rate per bucket over the
 * window (the last day before the newest trace when none is chosen). The
 * filters live in the address, so a view can be shared and the back button
 * pages back.
 */
import { DateTime } from "effect"
import { useEffect, useState } from "preact/hooks"
import * as id from "../api/ids"
import { call } from "../api/runtime"
import { LatencyChart } from "../components/LatencyChart"
import { StatsChart } from "../components/StatsChart"
import { Badge, ErrorNotice, Loading, PageHeading, TableWrap, When } from "../components/ui"
import { useResource } from "../hooks"
import { Link, navigate, pathOf } from "../router"

const pageSizes = [10, 20, 50, 100] as const

interface Filters {
  readonly status: "" | "ok" | "error"
  readonly model: string
  /** RFC 3339, or empty. */
  readonly start: string
  readonly end: string
  readonly limit: number
  readonly offset: number
}

const readFilters = (query: URLSearchParams): Filters => {
  const status = query.get("status")
  const limit = Number.parseInt(query.get("limit") ?? "", 10)
  return {
    status: status === "ok" || status === "error" ? status : "",
    model: (query.get("model") ?? "").slice(0, 256),
    start: query.get("start") ?? "",
    end: query.get("end") ?? "",
    limit: pageSizes.includes(limit as (typeof pageSizes)[number]) ? limit : 20,
    offset: Math.max(0, Number.parseInt(query.get("offset") ?? "0", 10) || 0)
  }
}

const addressOf = (account: string, name: string, filters: Filters) => {
  const params = new URLSearchParams()
  if (filters.status !== "") params.set("status", filters.status)
  if (filters.model !== "") params.set("model", filters.model)
  if (filters.start !== "") params.set("start", filters.start)
  if (filters.end !== "") params.set("end", filters.end)
  if (filters.limit !== 20) params.set("limit", String(filters.limit))
  if (filters.offset > 0) params.set("offset", String(filters.offset))
  const search = params.toString()
  return `${pathOf("agents", account, name, "traces")}${search === "" ? "" : `?${search}`}`
}

/** `datetime-local` input value (local time) to RFC 3339 in UTC, and back. */
const toRfc3339 = (local: string) => (local === "" ? "" : new Date(local).toISOString())
const toLocalInput = (rfc3339: string) => {
  if (rfc3339 === "") return ""
  const date = new Date(rfc3339)
  if (Number.isNaN(date.getTime())) return ""
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`
}

/** An instant of the address, or nothing when it is missing or unreadable. */
const instant = (text: string) => {
  const date = new Date(text)
  return text === "" || Number.isNaN(date.getTime()) ? undefined : DateTime.unsafeMake(date)
}

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max)}…` : text)

export const TracesPage = ({ account, name, query }: { readonly account: string; readonly name: string; readonly query: URLSearchParams }) => {
  const filters = readFilters(query)
  const [status, setStatus] = useState(filters.status)
  const [model, setModel] = useState(filters.model)
  const [start, setStart] = useState(toLocalInput(filters.start))
  const [end, setEnd] = useState(toLocalInput(filters.end))
  const [limit, setLimit] = useState(filters.limit)
  useEffect(() => {
    setStatus(filters.status)
    setModel(filters.model)
    setStart(toLocalInput(filters.start))
    setEnd(toLocalInput(filters.end))
    setLimit(filters.limit)
  }, [filters.status, filters.model, filters.start, filters.end, filters.limit])

  const path = { account: id.account(account), name: id.agent(name) }
  const from = instant(filters.start)
  const to = instant(filters.end)
  const timeWindow = { ...(from === undefined ? {} : { start_time: from }), ...(to === undefined ? {} : { end_time: to }) }
  const page = useResource(
    (signal) =>
      call(
        (client) =>
          client.traces.list({
            path,
            urlParams: {
              ...timeWindow,
              ...(filters.status === "" ? {} : { status: filters.status }),
              ...(filters.model === "" ? {} : { model: filters.model }),
              limit: filters.limit,
              offset: filters.offset
            }
          }),
        signal
      ),
    [account, name, filters.status, filters.model, filters.start, filters.end, filters.limit, filters.offset]
  )
  // Percentiles and error rate per bucket, computed by the server over the window: the one chosen, else the
  // day before the newest trace (so that a quiet agent's last traces still show).
  const stats = useResource(
    async (signal) => {
      let window = from !== undefined && to !== undefined ? { start_time: from, end_time: to } : undefined
      if (window === undefined) {
        const newest = await call((client) => client.traces.list({ path, urlParams: { ...timeWindow, limit: 1 } }), signal)
        const last = newest.traces[0]
        const end = to ?? (last === undefined ? DateTime.unsafeNow() : last.timestamp)
        window = { start_time: from ?? DateTime.subtract(end, { days: 1 }), end_time: end }
      }
      const answer = await call((client) => client.traces.stats({ path, urlParams: { ...window, buckets: 24 } }), signal)
      return answer
    },
    [account, name, filters.start, filters.end]
  )
  // The error rate is of the whole window, whatever the status filter: two counts.
  const rate = useResource(
    async (signal) => {
      const [all, errors] = await Promise.all([
        call((client) => client.traces.list({ path, urlParams: { ...timeWindow, limit: 1 } }), signal),
        call((client) => client.traces.list({ path, urlParams: { ...timeWindow, status: "error", limit: 1 } }), signal)
      ])
      return { total: all.total, errors: errors.total }
    },
    [account, name, filters.start, filters.end]
  )

  const go = (change: Partial<Filters>) => navigate(addressOf(account, name, { ...filters, ...change }))
  const data = page.data
  return (
    <>
      <PageHeading title={`Traces of ${account}/${name}`}>
        Traces of{" "}
        <Link href={pathOf("agents", account, name)}>
          {account}/{name}
        </Link>
      </PageHeading>
      <form
        class="filters card"
        aria-label="Filter traces"
        onSubmit={(event) => {
          event.preventDefault()
          go({ status, model: model.trim(), start: toRfc3339(start), end: toRfc3339(end), limit, offset: 0 })
        }}
      >
        <div class="fields">
          <div>
            <label for="trace-status">Status</label>
            <select id="trace-status" value={status} onChange={(event) => setStatus(event.currentTarget.value as Filters["status"])}>
              <option value="">Any</option>
              <option value="ok">ok</option>
              <option value="error">error</option>
            </select>
          </div>
          <div>
            <label for="trace-model">Model</label>
            <input id="trace-model" type="text" maxLength={256} value={model} onInput={(event) => setModel(event.currentTarget.value)} />
          </div>
          <div>
            <label for="trace-start">From</label>
            <input id="trace-start" type="datetime-local" value={start} onInput={(event) => setStart(event.currentTarget.value)} />
          </div>
          <div>
            <label for="trace-end">To</label>
            <input id="trace-end" type="datetime-local" value={end} onInput={(event) => setEnd(event.currentTarget.value)} />
          </div>
          <div>
            <label for="trace-limit">Per page</label>
            <select id="trace-limit" value={String(limit)} onChange={(event) => setLimit(Number(event.currentTarget.value))}>
              {pageSizes.map((size) => <option key={size} value={String(size)}>{size}</option>)}
            </select>
          </div>
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Apply
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => navigate(addressOf(account, name, { status: "", model: "", start: "", end: "", limit: 20, offset: 0 }))}
          >
            Clear
          </button>
        </div>
      </form>
      <ErrorNotice error={page.error} context="The traces could not be read" />
      <div class="grid-2 figures">
        <section aria-labelledby="rate-heading" class="card figure">
          <h2 id="rate-heading">Error rate</h2>
          <ErrorNotice error={rate.error} />
          {rate.data === undefined ? <Loading /> : (
            <p class="big-number" aria-describedby="rate-help">
              {rate.data.total === 0 ? "—" : `${((rate.data.errors / rate.data.total) * 100).toFixed(1)}%`}
            </p>
          )}
          <p id="rate-help" class="muted">
            {rate.data !== undefined && `${rate.data.errors} of ${rate.data.total} traces ${filters.start === "" && filters.end === "" ? "in all" : "in the window"} ended in error.`}
          </p>
        </section>
        <section aria-labelledby="latency-heading" class="card figure">
          <h2 id="latency-heading">Latency over time</h2>
          <p class="muted small">The traces of this page.</p>
          {data !== undefined && (
            <LatencyChart
              titleId="latency-heading"
              points={data.traces.map((t) => ({ id: t.trace_id, time: t.timestamp, latencyMs: t.latency_ms, error: t.status === "error" }))}
            />
          )}
        </section>
      </div>
      <section aria-labelledby="stats-heading" class="card figure">
        <h2 id="stats-heading">Latency percentiles and error rate</h2>
        <p class="muted small">
          {stats.data === undefined
            ? "Computed by the server over the window."
            : <>Computed by the server over the window, from <When value={stats.data.start_time} /> to <When value={stats.data.end_time} />.</>}
        </p>
        <ErrorNotice error={stats.error} />
        {stats.data === undefined ? <Loading /> : <StatsChart titleId="stats-heading" buckets={stats.data.buckets} />}
      </section>
      <section aria-labelledby="table-heading">
        <h2 id="table-heading">Traces</h2>
        {page.loading && data === undefined && <Loading />}
        {data !== undefined && (
          <>
            <p role="status" aria-live="polite" class="muted">
              {data.total === 0
                ? "No traces match."
                : `Traces ${data.offset + 1}–${data.offset + data.traces.length} of ${data.total}, newest first.`}
            </p>
            {data.traces.length > 0 && (
              <TableWrap label="Traces table">
                <table aria-busy={page.loading}>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Name</th>
                      <th scope="col">Status</th>
                      <th scope="col" class="number">Latency</th>
                      <th scope="col">Model</th>
                      <th scope="col" class="number">Tokens in / out</th>
                      <th scope="col">Input</th>
                      <th scope="col">Output</th>
                      <th scope="col">Trace id</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.traces.map((trace) => (
                      <tr key={trace.trace_id}>
                        <td class="nowrap">
                          <When value={trace.timestamp} precise />
                        </td>
                        <td>{trace.name}</td>
                        <td>
                          <Badge tone={trace.status === "ok" ? "ok" : "error"}>{trace.status}</Badge>
                        </td>
                        <td class="number nowrap">{trace.latency_ms.toFixed(1)} ms</td>
                        <td>{trace.model ?? "—"}</td>
                        <td class="number nowrap">{trace.usage === null ? "—" : `${trace.usage.input_tokens} / ${trace.usage.output_tokens}`}</td>
                        <td title={trace.input}>{clip(trace.input)}</td>
                        <td title={trace.output}>{clip(trace.output)}</td>
                        <td>
                          <Link href={pathOf("agents", account, name, "traces", trace.trace_id)}>
                            <code class="trace-id">{trace.trace_id}</code>
                          </Link>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            <nav class="pager" aria-label="Trace pages">
              <button
                type="button"
                class="secondary"
                disabled={filters.offset === 0}
                onClick={() => go({ offset: Math.max(0, filters.offset - filters.limit) })}
              >
                Previous page
              </button>
              <span>
                Page {Math.floor(filters.offset / filters.limit) + 1} of {Math.max(1, Math.ceil(data.total / filters.limit))}
              </span>
              <button
                type="button"
                class="secondary"
                disabled={filters.offset + filters.limit >= data.total}
                onClick={() => go({ offset: filters.offset + filters.limit })}
              >
                Next page
              </button>
            </nav>
          </>
        )}
      </section>
    </>
  )
}
