/**
 * Latency percentiles and error rate over a window, as the server computed
 * them per bucket (`GET .../traces/stats`): the p50 and p95 as two lines
 * (p95 dashed, so that they differ by more than colour) on a latency axis,
 * and the error rate as bars on a 0–100 % axis. Buckets without traces leave
 * gaps. The text alternative sums the window up; the caption names the
 * highest p95 and the worst error rate.
 */
import { formatMs, niceCeiling } from "../chart"
import { toDate } from "./ui"

export interface StatsBucket {
  readonly start: unknown
  readonly count: number
  readonly errors: number
  readonly error_rate: number | null
  readonly p50_ms: number | null
  readonly p95_ms: number | null
}

const width = 960
const height = 260
const margin = { top: 14, right: 52, bottom: 30, left: 62 }

const timeLabel = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })

const percent = (rate: number) => `${(rate * 100).toFixed(rate === 0 || rate === 1 ? 0 : 1)}%`

/** An SVG path through the buckets that have a value, broken where one has none. */
const pathOf = (values: ReadonlyArray<number | null>, x: (i: number) => number, y: (v: number) => number) => {
  let d = ""
  let drawing = false
  values.forEach((value, i) => {
    if (value === null) {
      drawing = false
      return
    }
    d += `${drawing ? "L" : "M"}${x(i).toFixed(1)},${y(value).toFixed(1)} `
    drawing = true
  })
  return d.trim()
}

export const StatsChart = ({ buckets, titleId }: { readonly buckets: ReadonlyArray<StatsBucket>; readonly titleId: string }) => {
  const total = buckets.reduce((n, b) => n + b.count, 0)
  if (buckets.length === 0 || total === 0) return <p class="muted">No traces in this window.</p>
  const errors = buckets.reduce((n, b) => n + b.errors, 0)
  const p95s = buckets.flatMap((b) => (b.p95_ms === null ? [] : [b.p95_ms]))
  const top = niceCeiling(Math.max(...p95s))
  const worst = buckets.reduce((w, b) => (b.error_rate !== null && (w === undefined || b.error_rate > (w.error_rate ?? 0)) ? b : w), undefined as StatsBucket | undefined)
  const plotWidth = width - margin.left - margin.right
  const plotHeight = height - margin.top - margin.bottom
  const slot = plotWidth / buckets.length
  const x = (i: number) => margin.left + slot * (i + 0.5)
  const y = (ms: number) => margin.top + plotHeight - (ms / top) * plotHeight
  const yRate = (rate: number) => margin.top + plotHeight - rate * plotHeight
  const first = toDate(buckets[0]!.start)
  const last = toDate(buckets[buckets.length - 1]!.start)
  const summary = `${total} traces in ${buckets.length} buckets${first === undefined ? "" : ` from ${timeLabel.format(first)}`}; ` +
    `highest p95 ${formatMs(Math.max(...p95s))}; ${errors} errors (${percent(errors / total)})` +
    (worst !== undefined && worst.error_rate !== null && worst.error_rate > 0
      ? `, worst bucket ${percent(worst.error_rate)}${toDate(worst.start) === undefined ? "" : ` at ${timeLabel.format(toDate(worst.start)!)}`}.`
      : ".")
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`${titleId} ${titleId}-desc`} preserveAspectRatio="xMidYMid meet">
        <desc id={`${titleId}-desc`}>{summary}</desc>
        {[0, top / 2, top].map((tick) => (
          <g key={tick} class="tick">
            <line x1={margin.left} x2={width - margin.right} y1={y(tick)} y2={y(tick)} class="grid" />
            <text x={margin.left - 6} y={y(tick)} text-anchor="end" dominant-baseline="middle">
              {formatMs(tick)}
            </text>
          </g>
        ))}
        {[0, 0.5, 1].map((rate) => (
          <text key={rate} x={width - margin.right + 6} y={yRate(rate)} text-anchor="start" dominant-baseline="middle">
            {percent(rate)}
          </text>
        ))}
        {buckets.map((b, i) =>
          b.error_rate === null || b.error_rate === 0 ? null : (
            <rect
              key={`e${i}`}
              class="error-bar"
              data-bucket={i}
              x={x(i) - slot * 0.35}
              y={yRate(b.error_rate)}
              width={slot * 0.7}
              height={yRate(0) - yRate(b.error_rate)}
            />
          )
        )}
        <path d={pathOf(buckets.map((b) => b.p50_ms), x, y)} class="line p50" fill="none" />
        <path d={pathOf(buckets.map((b) => b.p95_ms), x, y)} class="line p95" fill="none" />
        {/* A mark on each bucket's values, so that a bucket alone between empty ones still shows. */}
        {buckets.map((b, i) => b.p50_ms === null ? null : <circle key={`m${i}`} class="point" cx={x(i)} cy={y(b.p50_ms)} r={3} />)}
        {buckets.map((b, i) =>
          b.p95_ms === null ? null : <rect key={`n${i}`} class="point point-p95" x={x(i) - 3} y={y(b.p95_ms) - 3} width={6} height={6} />
        )}
        <text x={margin.left} y={height - 8} text-anchor="start">
          {first === undefined ? "" : timeLabel.format(first)}
        </text>
        {buckets.length > 1 && last !== undefined && (
          <text x={width - margin.right} y={height - 8} text-anchor="end">
            {timeLabel.format(last)}
          </text>
        )}
      </svg>
      <figcaption>
        <span class="legend">
          <svg width="18" height="10" aria-hidden="true">
            <line x1="1" x2="17" y1="5" y2="5" class="line p50" />
          </svg>{" "}
          p50
        </span>{" "}
        <span class="legend">
          <svg width="18" height="10" aria-hidden="true">
            <line x1="1" x2="17" y1="5" y2="5" class="line p95" />
          </svg>{" "}
          p95
        </span>{" "}
        <span class="legend">
          <svg width="10" height="10" aria-hidden="true">
            <rect x="1" y="1" width="8" height="8" class="error-bar" />
          </svg>{" "}
          error rate (right axis)
        </span>{" "}
        <span class="muted">{summary}</span>
      </figcaption>
    </figure>
  )
}
