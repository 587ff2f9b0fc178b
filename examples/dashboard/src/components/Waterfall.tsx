/**
 * A trace's spans as a waterfall: one row per span in tree order (a span,
 * then the spans under it, indented by depth), each with a bar offset by
 * when it started after the trace's first span and as wide as it lasted.
 * Each row is a button that shows the span's details (attributes, events,
 * GenAI input, output and tokens) below; the bar's numbers are in the row's
 * text too, so the bars themselves are decoration.
 */
import type { ComponentChildren } from "preact"
import { formatMs } from "../chart"
import { Badge, KeyValueRows, toDate } from "./ui"

/** A span as the trace route answers it (the fields the view reads). */
export interface SpanView {
  readonly span_id: string
  readonly parent_span_id: string | null
  readonly name: string
  readonly kind: string
  readonly status: string
  readonly status_message: string
  readonly start_time: unknown
  readonly end_time: unknown
  readonly duration_ms: number
  readonly attributes: Readonly<Record<string, string>>
  readonly events: ReadonlyArray<{ readonly name: string; readonly timestamp: unknown; readonly attributes: Readonly<Record<string, string>> }>
  readonly gen_ai: {
    readonly operation: string | null
    readonly model: string | null
    readonly input_tokens: number | null
    readonly output_tokens: number | null
    readonly input: string | null
    readonly output: string | null
  } | null
  readonly children: ReadonlyArray<SpanView>
}

export interface Row {
  readonly span: SpanView
  readonly depth: number
  /** Milliseconds from the trace's first span start. */
  readonly offset: number
}

/** The spans in tree order with their depth and start offset; `total` is from the first start to the last end. */
export const rowsOf = (roots: ReadonlyArray<SpanView>): { readonly rows: ReadonlyArray<Row>; readonly total: number } => {
  const flat: Array<{ span: SpanView; depth: number; start: number; end: number }> = []
  const walk = (span: SpanView, depth: number) => {
    const start = toDate(span.start_time)?.getTime() ?? 0
    flat.push({ span, depth, start, end: Math.max(start + span.duration_ms, toDate(span.end_time)?.getTime() ?? start) })
    for (const child of span.children) walk(child, depth + 1)
  }
  for (const root of roots) walk(root, 0)
  if (flat.length === 0) return { rows: [], total: 0 }
  const first = Math.min(...flat.map((r) => r.start))
  const last = Math.max(...flat.map((r) => r.end))
  return { rows: flat.map((r) => ({ span: r.span, depth: r.depth, offset: r.start - first })), total: Math.max(last - first, 0) }
}

/** Left and width of a bar, in percent of the trace's time (a span of no time still shows). */
export const barOf = (row: Row, total: number) => {
  if (total <= 0) return { left: 0, width: 100 }
  const left = (row.offset / total) * 100
  const width = Math.max((row.span.duration_ms / total) * 100, 0.5)
  return { left: Math.min(left, 99.5), width: Math.min(width, 100 - Math.min(left, 99.5)) }
}

export const Waterfall = (
  { onSelect, selected, spans }: { readonly spans: ReadonlyArray<SpanView>; readonly selected: string | undefined; readonly onSelect: (spanId: string) => void }
) => {
  const { rows, total } = rowsOf(spans)
  if (rows.length === 0) return <p class="muted">This trace has no spans.</p>
  return (
    <ol class="waterfall" aria-label="Spans">
      {rows.map((row) => {
        const bar = barOf(row, total)
        const current = row.span.span_id === selected
        return (
          <li key={row.span.span_id} class={current ? "current" : undefined}>
            <button
              type="button"
              class="span-row"
              aria-pressed={current}
              aria-controls="span-details"
              onClick={() => onSelect(row.span.span_id)}
            >
              <span class="span-name" style={{ paddingLeft: `${row.depth * 1.1}rem` }}>
                {row.span.name}
                {row.span.status === "error" && <Badge tone="error">error</Badge>}
              </span>
              <span class="span-bar-track" aria-hidden="true">
                <span
                  class={`span-bar${row.span.status === "error" ? " span-bar-error" : ""}`}
                  data-left={bar.left.toFixed(2)}
                  data-width={bar.width.toFixed(2)}
                  style={{ left: `${bar.left}%`, width: `${bar.width}%` }}
                />
              </span>
              <span class="span-time">
                +{formatMs(row.offset)} · {formatMs(row.span.duration_ms)}
              </span>
            </button>
          </li>
        )
      })}
    </ol>
  )
}

/** One term and its value of a `dl.facts`. */
export const Fact = ({ children, label }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
)

const entries = (record: Readonly<Record<string, string>>) => Object.entries(record).sort(([a], [b]) => a.localeCompare(b))

/** One span's details: its facts, GenAI input, output and tokens, attributes and events. */
export const SpanDetails = ({ span }: { readonly span: SpanView }) => (
  <section id="span-details" class="card" aria-labelledby="span-heading">
    <h2 id="span-heading">Span {span.name}</h2>
    <dl class="facts">
      <Fact label="Span id">
        <code>{span.span_id}</code>
      </Fact>
      <Fact label="Kind">{span.kind}</Fact>
      <Fact label="Status">
        {span.status}
        {span.status_message === "" ? "" : ` (${span.status_message})`}
      </Fact>
      <Fact label="Duration">{formatMs(span.duration_ms)}</Fact>
      {span.gen_ai?.operation != null && <Fact label="Operation">{span.gen_ai.operation}</Fact>}
      {span.gen_ai?.model != null && <Fact label="Model">{span.gen_ai.model}</Fact>}
      {(span.gen_ai?.input_tokens != null || span.gen_ai?.output_tokens != null) && (
        <Fact label="Tokens">
          {span.gen_ai?.input_tokens ?? 0} in, {span.gen_ai?.output_tokens ?? 0} out
        </Fact>
      )}
    </dl>
    {span.gen_ai?.input != null && (
      <>
        <h3>Input</h3>
        <pre class="value">{span.gen_ai.input}</pre>
      </>
    )}
    {span.gen_ai?.output != null && (
      <>
        <h3>Output</h3>
        <pre class="value">{span.gen_ai.output}</pre>
      </>
    )}
    <h3>Attributes</h3>
    {Object.keys(span.attributes).length === 0 ? <p class="muted">None.</p> : (
      <table class="attributes" aria-label="Span attributes">
        <thead>
          <tr>
            <th scope="col">Attribute</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <KeyValueRows entries={entries(span.attributes)} />
      </table>
    )}
    {span.events.length > 0 && (
      <>
        <h3>Events</h3>
        <ul>
          {span.events.map((event, i) => (
            <li key={i}>
              {event.name}
              {Object.keys(event.attributes).length > 0 && ` (${entries(event.attributes).map(([k, v]) => `${k}=${v}`).join(", ")})`}
            </li>
          ))}
        </ul>
      </>
    )}
  </section>
)
