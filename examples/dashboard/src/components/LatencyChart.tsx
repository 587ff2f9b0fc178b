/**
 * Latency over time as a hand-written SVG: one point per trace (errors drawn
 * as squares, not only in another colour), joined in time order, with a
 * labelled latency axis. Its text alternative sums the points up; the table
 * beside it has every value.
 */
import { formatMs, niceCeiling } from "../chart"
import { toDate } from "./ui"

export interface LatencyPoint {
  readonly id: string
  readonly time: unknown
  readonly latencyMs: number
  readonly error: boolean
}

const width = 640
const height = 220
const margin = { top: 14, right: 16, bottom: 30, left: 62 }

const timeLabel = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })

export const LatencyChart = ({ points, titleId }: { readonly points: ReadonlyArray<LatencyPoint>; readonly titleId: string }) => {
  const dated = points
    .map((p) => ({ ...p, at: toDate(p.time)?.getTime() }))
    .filter((p): p is LatencyPoint & { at: number } => p.at !== undefined)
    .sort((a, b) => a.at - b.at)
  if (dated.length === 0) return <p class="muted">No traces to chart.</p>
  const first = dated[0]!.at
  const last = dated[dated.length - 1]!.at
  const span = Math.max(last - first, 1)
  const top = niceCeiling(Math.max(...dated.map((p) => p.latencyMs)))
  const plotWidth = width - margin.left - margin.right
  const plotHeight = height - margin.top - margin.bottom
  const x = (at: number) => margin.left + (dated.length === 1 ? plotWidth / 2 : ((at - first) / span) * plotWidth)
  const y = (ms: number) => margin.top + plotHeight - (ms / top) * plotHeight
  const latencies = dated.map((p) => p.latencyMs)
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length
  const errors = dated.filter((p) => p.error).length
  const summary = `${dated.length} trace${dated.length === 1 ? "" : "s"} from ${timeLabel.format(first)} to ${timeLabel.format(last)}; latency from ${formatMs(Math.min(...latencies))} to ${
    formatMs(Math.max(...latencies))
  }, mean ${formatMs(mean)}; ${errors} with errors.`
  const ticks = [0, top / 2, top]
  const path = dated.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.at).toFixed(1)},${y(p.latencyMs).toFixed(1)}`).join(" ")
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`${titleId} ${titleId}-desc`} preserveAspectRatio="xMidYMid meet">
        <desc id={`${titleId}-desc`}>{summary}</desc>
        {ticks.map((tick) => (
          <g key={tick} class="tick">
            <line x1={margin.left} x2={width - margin.right} y1={y(tick)} y2={y(tick)} class="grid" />
            <text x={margin.left - 6} y={y(tick)} text-anchor="end" dominant-baseline="middle">
              {formatMs(tick)}
            </text>
          </g>
        ))}
        <text x={margin.left} y={height - 8} text-anchor="start">
          {timeLabel.format(first)}
        </text>
        {dated.length > 1 && (
          <text x={width - margin.right} y={height - 8} text-anchor="end">
            {timeLabel.format(last)}
          </text>
        )}
        <path d={path} class="line" fill="none" />
        {dated.map((p) =>
          p.error
            ? <rect key={p.id} class="point point-error" x={x(p.at) - 4} y={y(p.latencyMs) - 4} width={8} height={8} />
            : <circle key={p.id} class="point" cx={x(p.at)} cy={y(p.latencyMs)} r={3.5} />
        )}
      </svg>
      <figcaption>
        <span class="legend">
          <svg width="10" height="10" aria-hidden="true">
            <circle cx="5" cy="5" r="4" class="point" />
          </svg>{" "}
          ok
        </span>{" "}
        <span class="legend">
          <svg width="10" height="10" aria-hidden="true">
            <rect x="1" y="1" width="8" height="8" class="point point-error" />
          </svg>{" "}
          error
        </span>{" "}
        <span class="muted">{summary}</span>
      </figcaption>
    </figure>
  )
}
