// Small helpers shared by the runner and the workloads: time, statistics,
// bounded waiting, bounded concurrency and number formatting.

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes of one machine. */
export const now = () => performance.timeOrigin + performance.now()

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The targets in the order round `round` (from 1) loads them: turned by one
 * place each round, so that over as many rounds as there are targets each
 * takes every place once. In a run of one build against itself (`--against`
 * its own main.js, 2 x 4 rounds of the flow) the target loaded second took
 * 3 to 6 % less CPU a message in most rounds. Reversing the order every other
 * round, as this did before, left the middle one of three targets (the
 * `--against` build, between the example server and bare) second in every
 * round; turning spreads the places over all of them.
 */
export const inTurn = (targets, round) => {
  const shift = (round - 1) % targets.length
  return [...targets.slice(shift), ...targets.slice(0, shift)]
}

/** Rejects with a message naming `what` when `promise` takes longer than `ms`. */
export const withTimeout = (promise, ms, what) => {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${Math.round(ms / 1000)} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Runs `fn` over `items` with at most `limit` calls in flight; resolves with the results in order. */
export const pool = async (items, limit, fn) => {
  const results = new Array(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await fn(items[i], i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return results
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export const median = (values) => {
  const sorted = Float64Array.from(values.filter((v) => Number.isFinite(v))).sort()
  if (sorted.length === 0) return NaN
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Nearest-rank percentile of unsorted numbers; NaN for none. */
export const percentile = (values, p) => {
  const finite = values.filter((v) => Number.isFinite(v))
  if (finite.length === 0) return NaN
  const sorted = Float64Array.from(finite).sort()
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]
}

/** The least-squares slope of `values` against their index (change per step); NaN for fewer than two. */
export const slope = (values) => {
  const n = values.length
  if (n < 2) return NaN
  const meanX = (n - 1) / 2
  const meanY = values.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  values.forEach((y, x) => {
    num += (x - meanX) * (y - meanY)
    den += (x - meanX) ** 2
  })
  return num / den
}

export const max = (values) => values.reduce((a, b) => (Number.isFinite(b) && b > a ? b : a), -Infinity)

/** A number for a table: thousands separators, `digits` decimals, "-" when unknown. */
export const fmt = (value, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "-"

export const mb = (bytes, digits = 1) => fmt(bytes / 1024 / 1024, digits)

/** "1.23x"; "-" when either side is unknown. */
export const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : "-")

/** A goal check for the report: `ok` is true, false, or null when it could not be measured. */
export const goal = (label, measured, target, ok) => ({ label, measured, target, ok: ok === null ? null : Boolean(ok) })

/** Prints rows of cells as a left-aligned text table. */
export const table = (columns, rows, indent = "  ") => {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => String(r[i] ?? "").length)))
  const line = (cells) => indent + cells.map((c, i) => String(c ?? "").padEnd(widths[i])).join("  ").trimEnd()
  return [line(columns), ...rows.map(line)].join("\n")
}
