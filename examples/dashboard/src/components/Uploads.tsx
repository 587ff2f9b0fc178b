/**
 * Files being uploaded to a deployment, each with its progress bar: the chat
 * attaches them once ready, the files page just lists them.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { asProblem, isAbort, type Problem } from "../api/runtime"
import { type Uploaded, uploadFile } from "../api/upload"
import { ErrorNotice, formatBytes } from "./ui"

/** One file of the list. */
export interface Upload {
  readonly id: number
  readonly name: string
  readonly size: number
  readonly sent: number
  readonly state: "uploading" | "ready" | "failed"
  readonly file: Uploaded | undefined
  readonly error: Problem | undefined
}

/** The uploads of one deployment, started as files are picked. */
export const useUploads = (deploymentId: string, onReady?: (file: Uploaded) => void) => {
  const [uploads, setUploads] = useState<ReadonlyArray<Upload>>([])
  const counter = useRef(0)
  const controllers = useRef(new Map<number, AbortController>())
  const ready = useRef(onReady)
  ready.current = onReady

  useEffect(() => () => {
    for (const controller of controllers.current.values()) controller.abort()
  }, [deploymentId])

  const update = (uploadId: number, change: Partial<Upload>) =>
    setUploads((current) => current.map((u) => (u.id === uploadId ? { ...u, ...change } : u)))

  const add = useCallback((files: ReadonlyArray<File>) => {
    for (const file of files) {
      const uploadId = ++counter.current
      const controller = new AbortController()
      controllers.current.set(uploadId, controller)
      setUploads((current) => [
        ...current,
        { id: uploadId, name: file.name, size: file.size, sent: 0, state: "uploading", file: undefined, error: undefined }
      ])
      uploadFile(deploymentId, file, (sent) => update(uploadId, { sent }), controller.signal).then(
        (uploaded) => {
          update(uploadId, { state: "ready", sent: file.size, file: uploaded })
          ready.current?.(uploaded)
        },
        (failure: unknown) => {
          if (isAbort(failure)) return
          update(uploadId, { state: "failed", error: asProblem(failure) })
        }
      ).finally(() => controllers.current.delete(uploadId))
    }
  }, [deploymentId])

  const remove = useCallback((uploadId: number) => {
    controllers.current.get(uploadId)?.abort()
    setUploads((current) => current.filter((u) => u.id !== uploadId))
  }, [])

  const clear = useCallback(() => setUploads([]), [])
  const busy = uploads.some((u) => u.state === "uploading")
  return { uploads, add, remove, clear, busy }
}

/** A file input (keyboard reachable, labelled) that starts an upload for each picked file. */
export const FilePicker = ({ inputId, label, onFiles, disabled = false }: {
  readonly inputId: string
  readonly label: string
  readonly onFiles: (files: ReadonlyArray<File>) => void
  readonly disabled?: boolean
}) => (
  <div class="file-picker">
    <label for={inputId}>{label}</label>
    <input
      id={inputId}
      type="file"
      multiple
      disabled={disabled}
      onChange={(event) => {
        const input = event.currentTarget
        onFiles(Array.from(input.files ?? []))
        input.value = ""
      }}
    />
  </div>
)

/** The list of uploads with a progress bar each, and a button to drop one. */
export const UploadList = ({ uploads, onRemove, removeLabel = "Remove" }: {
  readonly uploads: ReadonlyArray<Upload>
  readonly onRemove: (uploadId: number) => void
  readonly removeLabel?: string
}) =>
  uploads.length === 0 ? null : (
    <ul class="uploads" aria-label="Uploads">
      {uploads.map((upload) => {
        const percent = upload.size === 0 ? 100 : Math.round((upload.sent / upload.size) * 100)
        const progressId = `upload-progress-${upload.id}`
        return (
          <li key={upload.id} class={`upload upload-${upload.state}`}>
            <span class="upload-name" id={`${progressId}-label`}>
              {upload.name} <span class="muted">({formatBytes(upload.size)})</span>
            </span>
            {upload.state === "uploading" && (
              <progress id={progressId} max={100} value={percent} aria-labelledby={`${progressId}-label`}>
                {percent}%
              </progress>
            )}
            <span class="upload-state" aria-hidden="true">
              {upload.state === "uploading" ? `${percent}%` : upload.state === "ready" ? "ready" : "failed"}
            </span>
            <span class="visually-hidden" role="status">
              {upload.state === "ready" ? `${upload.name} uploaded` : ""}
            </span>
            <button type="button" class="link-button" onClick={() => onRemove(upload.id)} aria-label={`${removeLabel} ${upload.name}`}>
              {removeLabel}
            </button>
            {upload.error !== undefined && <ErrorNotice error={upload.error} context={`${upload.name} could not be uploaded`} />}
          </li>
        )
      })}
    </ul>
  )
