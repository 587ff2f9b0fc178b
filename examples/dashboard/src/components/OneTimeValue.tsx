/**
 * A value the server shows only once (a token's secret, an invitation's
 * link): a read-only field that selects itself on focus, a Copy button, and
 * a note saying it will not be shown again. When the browser refuses the
 * clipboard (an insecure origin, a denied permission) the text is selected
 * instead, so that the keyboard shortcut copies it.
 */
import { useId, useRef, useState } from "preact/hooks"

export interface OneTimeValueProps {
  readonly label: string
  readonly value: string
  /** Why it is shown only now, and what to do with it. */
  readonly note: string
}

export const OneTimeValue = ({ label, value, note }: OneTimeValueProps) => {
  const fieldId = useId()
  const noteId = useId()
  const field = useRef<HTMLInputElement>(null)
  const [status, setStatus] = useState("")

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setStatus("Copied to the clipboard.")
    } catch {
      field.current?.focus()
      field.current?.select()
      setStatus("The browser did not allow copying: the text is selected, press Ctrl+C (⌘C on a Mac).")
    }
  }

  return (
    <div class="notice notice-warn one-time">
      <label for={fieldId}>{label}</label>
      <div class="inline">
        <input
          id={fieldId}
          ref={field}
          class="secret"
          readOnly
          value={value}
          spellcheck={false}
          autoComplete="off"
          aria-describedby={noteId}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" class="secondary" onClick={() => void copy()}>
          Copy<span class="visually-hidden"> {label.toLowerCase()}</span>
        </button>
      </div>
      <p id={noteId} class="help">
        {note}
      </p>
      <p role="status" aria-live="polite" class="small">
        {status}
      </p>
    </div>
  )
}
