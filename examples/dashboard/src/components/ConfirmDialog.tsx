/**
 * A confirmation in a modal `<dialog>`: the browser keeps the focus inside
 * it, Escape cancels, and the focus returns to the button that opened it.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useId, useRef } from "preact/hooks"

export interface ConfirmDialogProps {
  readonly open: boolean
  readonly title: string
  readonly children: ComponentChildren
  readonly confirmLabel: string
  readonly onConfirm: () => void
  readonly onCancel: () => void
  readonly danger?: boolean
  /** Keeps the confirm button disabled (until the person typed what the dialog asks for). */
  readonly confirmDisabled?: boolean
}

export const ConfirmDialog = (
  { open, title, children, confirmLabel, onConfirm, onCancel, danger = false, confirmDisabled = false }: ConfirmDialogProps
) => {
  // A page may hold several dialogs: each needs its own id for its title.
  const titleId = useId()
  const ref = useRef<HTMLDialogElement>(null)
  const opener = useRef<Element | null>(null)
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (open && !dialog.open) {
      opener.current = document.activeElement
      dialog.showModal()
    } else if (!open && dialog.open) {
      dialog.close()
    }
  }, [open])
  useEffect(() => {
    if (!open && opener.current instanceof HTMLElement) {
      opener.current.focus()
      opener.current = null
    }
  }, [open])
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault()
        onCancel()
      }}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault()
          // Checked here as well as by the disabled button, whatever submitted the form.
          if (!confirmDisabled) onConfirm()
        }}
      >
        <h2 id={titleId}>{title}</h2>
        <div class="dialog-body">{children}</div>
        <div class="actions">
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" class={danger ? "danger" : "primary"} disabled={confirmDisabled}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  )
}
