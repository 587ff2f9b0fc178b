/**
 * The small pieces every page uses: headings that take focus after a
 * navigation, error notices that show the API's `details`, loading states,
 * dates.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useRef } from "preact/hooks"
import type { Problem } from "../api/runtime"

/**
 * The page's `<h1>`. It sets the document title and, after a navigation,
 * takes the focus so that screen readers announce the new page.
 */
export const PageHeading = ({ children, title }: { readonly children: ComponentChildren; readonly title: string }) => {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Hosting`
    // The first page of a visit keeps the focus where the browser put it.
    if (document.body.dataset["navigated"] === "yes") ref.current?.focus()
    document.body.dataset["navigated"] = "yes"
  }, [title])
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  )
}

/** An API failure, with its `details` text and its code. */
export const ErrorNotice = ({ error, context }: { readonly error: Problem | undefined; readonly context?: string }) =>
  error === undefined ? null : (
    <div class="notice notice-error" role="alert">
      <p>
        {context !== undefined && <strong>{context}: </strong>}
        <span class="details">{error.problem.details}</span>
        {error.problem.status !== undefined && (
          <span class="code">
            {" "}
            ({error.problem.status} {error.problem.error})
          </span>
        )}
      </p>
    </div>
  )

/** A quiet success message, announced politely. */
export const Success = ({ children }: { readonly children: ComponentChildren }) => (
  <div class="notice notice-ok" role="status">
    <p>{children}</p>
  </div>
)

/** What shows while something loads. */
export const Loading = ({ label = "Loading…" }: { readonly label?: string }) => (
  <p class="loading" role="status" aria-live="polite">
    {label}
  </p>
)

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" })

/** A date as a `<time>`, readable and machine-readable. */
export const When = ({ value, precise = false }: { readonly value: unknown; readonly precise?: boolean }) => {
  const date = toDate(value)
  if (date === undefined) return <span class="muted">—</span>
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {precise ? `${dateFormat.format(date).split(",")[0]}, ${timeFormat.format(date)}` : dateFormat.format(date)}
    </time>
  )
}

/** A date from what the client decodes (`DateTime.Utc`, a `Date`, a string or epoch millis). */
export const toDate = (value: unknown): Date | undefined => {
  if (value === null || value === undefined) return undefined
  if (value instanceof Date) return value
  if (typeof value === "string" || typeof value === "number") {
    const date = new Date(value)
    return Number.isNaN(date.getTime()) ? undefined : date
  }
  if (typeof value === "object" && "epochMillis" in value && typeof value.epochMillis === "number") {
    return new Date(value.epochMillis)
  }
  return undefined
}

/** A table that scrolls sideways on a narrow screen instead of breaking the layout. */
export const TableWrap = ({ label, children }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
    {children}
  </div>
)

/** The body of a table of names and values: each name a row header in code, each value as it is written. */
export const KeyValueRows = ({ entries }: { readonly entries: ReadonlyArray<readonly [string, string]> }) => (
  <tbody>
    {entries.map(([key, value]) => (
      <tr key={key}>
        <th scope="row">
          <code>{key}</code>
        </th>
        <td>
          <pre class="value">{value}</pre>
        </td>
      </tr>
    ))}
  </tbody>
)

/** A status word as a badge. */
export const Badge = ({ tone = "neutral", children }: { readonly tone?: "ok" | "warn" | "error" | "neutral" | "info"; readonly children: ComponentChildren }) => (
  <span class={`badge badge-${tone}`}>{children}</span>
)

/** Bytes for people. */
export const formatBytes = (bytes: number) => {
  if (bytes < 1024) return `${bytes} B`
  const units = ["KiB", "MiB", "GiB"]
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}
