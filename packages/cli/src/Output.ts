/**
 * What `hosting` prints: results on stdout (tables for people, JSON with
 * `--json`), everything else — progress, notes, errors — on stderr, so that
 * stdout can be piped.
 */
import type { FileTransfer } from "@hosting/client"
import { DateTime, Effect } from "effect"

/** Writes to stdout as is. */
export const write = (text: string) => Effect.sync(() => void process.stdout.write(text))

/** Writes a line to stdout. */
export const line = (text: string) => write(`${text}\n`)

/** Writes a line to stderr. */
export const note = (text: string) => Effect.sync(() => void process.stderr.write(`${text}\n`))

/** JSON as the API writes it: dates as ISO strings. */
export const toJson = (value: unknown, indent?: number): string =>
  JSON.stringify(
    value,
    function(this: Record<string, unknown>, key, replaced) {
      // `this[key]` is the value before its own toJSON ran.
      const original = this[key]
      return DateTime.isDateTime(original) ? DateTime.formatIso(DateTime.toUtc(original)) : replaced
    },
    indent
  )

/** Prints a value as JSON on stdout, one document (or one line with `compact`). */
export const json = (value: unknown, compact = false) => line(toJson(value, compact ? undefined : 2))

/** A date for people: ISO 8601 in UTC, to the second. */
export const date = (value: DateTime.DateTime | null | undefined): string =>
  value === null || value === undefined ? "-" : DateTime.formatIso(DateTime.toUtc(value)).replace(/\.\d{3}Z$/, "Z")

/** One line of at most `max` characters. */
export const cut = (text: string, max = 60): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

/** A column of a table. */
export interface Column<A> {
  readonly header: string
  readonly value: (row: A) => string
  readonly right?: boolean
}

/** A table with a header line; columns two spaces apart; `(none)` when there are no rows. */
export const table = <A>(columns: ReadonlyArray<Column<A>>, rows: ReadonlyArray<A>): string => {
  if (rows.length === 0) return "(none)"
  const cells = rows.map((row) => columns.map((c) => c.value(row)))
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)))
  const render = (values: ReadonlyArray<string>) =>
    values
      .map((v, i) => (columns[i]!.right ? v.padStart(widths[i]!) : i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [render(columns.map((c) => c.header)), ...cells.map(render)].join("\n")
}

/** `key: value` lines, keys aligned. */
export const fields = (entries: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...entries.map(([k]) => k.length))
  return entries.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v}`).join("\n")
}

/** Bytes for people: 512 B, 1.5 KiB, 3.2 MiB. */
export const bytes = (n: number): string => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]
  let value = n
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(1)} ${units[unit]}`
}

/**
 * A progress report on stderr: a bar redrawn in place on a terminal,
 * otherwise a line now and then (at most one a second, and the last one), as
 * `<label>: <bytes>/<total> bytes (<percent>%)`.
 */
export const progress = (label: string | (() => string)): FileTransfer.OnProgress => {
  const labelOf = typeof label === "string" ? () => label : label
  const terminal = process.stderr.isTTY === true
  let last = 0
  let finished = false
  return ({ transferred, total }) =>
    Effect.sync(() => {
      if (finished) return
      const done = total !== undefined && transferred >= total
      const now = Date.now()
      if (!done && now - last < (terminal ? 100 : 1000) && transferred !== 0) return
      last = now
      const percent = total === undefined || total === 0 ? (done ? 100 : undefined) : Math.floor((transferred / total) * 100)
      const amount = total === undefined ? `${transferred} bytes` : `${transferred}/${total} bytes`
      if (terminal) {
        const width = 24
        const filled = percent === undefined ? 0 : Math.round((percent / 100) * width)
        const bar = percent === undefined ? "" : ` [${"#".repeat(filled)}${"-".repeat(width - filled)}]`
        const human = total === undefined ? bytes(transferred) : `${bytes(transferred)} / ${bytes(total)}`
        process.stderr.write(`\r${labelOf()}${bar} ${human}${percent === undefined ? "" : ` ${percent}%`} (${amount})\u001b[K`)
        if (done) process.stderr.write("\n")
      } else {
        process.stderr.write(`${labelOf()}: ${amount}${percent === undefined ? "" : ` (${percent}%)`}\n`)
      }
      if (done) finished = true
    })
}

/** Ends a progress line on a terminal when the total was unknown (no final redraw did it). */
export const endProgress = Effect.sync(() => {
  if (process.stderr.isTTY === true) process.stderr.write("\n")
})
