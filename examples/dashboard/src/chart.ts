/** Numbers of the latency chart, kept apart from its drawing. */

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
export const niceCeiling = (value: number) => {
  if (value <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power
  return 10 * power
}

/** A latency for people: milliseconds, or seconds from 1000 ms on. */
export const formatMs = (ms: number) => {
  if (ms === 0) return "0 ms"
  if (ms >= 1000) return `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s`
  return `${ms >= 10 ? Math.round(ms) : ms.toFixed(1)} ms`
}
