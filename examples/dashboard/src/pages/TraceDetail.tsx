/**
 * One trace: its facts (status, latency, model, tokens, input and output)
 * and its spans as a waterfall; the span picked (the first one until another
 * is) shows its attributes, events and GenAI input, output and tokens. The
 * picked span lives in the address (`?span=`), so a view can be shared.
 */
import { formatMs } from "../chart"
import * as id from "../api/ids"
import { call } from "../api/runtime"
import { Badge, ErrorNotice, Loading, PageHeading, When } from "../components/ui"
import { Fact, rowsOf, SpanDetails, type SpanView, Waterfall } from "../components/Waterfall"
import { useResource } from "../hooks"
import { Link, navigate, pathOf } from "../router"

export const TraceDetailPage = (
  { account, name, query, traceId }: { readonly account: string; readonly name: string; readonly traceId: string; readonly query: URLSearchParams }
) => {
  const trace = useResource(
    (signal) => call((client) => client.traces.get({ path: { account: id.account(account), name: id.agent(name), traceId } }), signal),
    [account, name, traceId]
  )
  const data = trace.data
  const spans = (data?.spans ?? []) as ReadonlyArray<SpanView>
  const rows = rowsOf(spans).rows
  const picked = query.get("span") ?? rows[0]?.span.span_id
  const selected = rows.find((row) => row.span.span_id === picked)?.span
  const here = pathOf("agents", account, name, "traces", traceId)
  return (
    <>
      <PageHeading title={`Trace ${traceId} of ${account}/${name}`}>
        Trace <code class="trace-id">{traceId}</code>
      </PageHeading>
      <p>
        <Link href={pathOf("agents", account, name, "traces")}>All traces of {account}/{name}</Link>
      </p>
      <ErrorNotice error={trace.error} context="The trace could not be read" />
      {trace.loading && data === undefined && <Loading />}
      {data !== undefined && (
        <>
          <section class="card" aria-labelledby="trace-heading">
            <h2 id="trace-heading">{data.name}</h2>
            <dl class="facts">
              <Fact label="Status">
                <Badge tone={data.status === "ok" ? "ok" : "error"}>{data.status}</Badge>
              </Fact>
              <Fact label="Started">
                <When value={data.timestamp} precise />
              </Fact>
              <Fact label="Latency">{formatMs(data.latency_ms)}</Fact>
              <Fact label="Model">{data.model ?? "—"}</Fact>
              <Fact label="Tokens">{data.usage === null ? "—" : `${data.usage.input_tokens} in, ${data.usage.output_tokens} out`}</Fact>
            </dl>
            <h3>Input</h3>
            <pre class="value">{data.input === "" ? "—" : data.input}</pre>
            <h3>Output</h3>
            <pre class="value">{data.output === "" ? "—" : data.output}</pre>
          </section>
          <section aria-labelledby="spans-heading">
            <h2 id="spans-heading">Spans ({rows.length})</h2>
            <Waterfall
              spans={spans}
              selected={selected?.span_id}
              onSelect={(spanId) => navigate(`${here}?span=${encodeURIComponent(spanId)}`, { replace: true })}
            />
          </section>
          {selected !== undefined && <SpanDetails span={selected} />}
        </>
      )}
    </>
  )
}
