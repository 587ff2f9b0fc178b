/** A file-system store for tests, in a temporary directory of its own. */
import { FsObjectStore } from "@hosting/object-store-fs"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A store in a fresh temporary directory, removed when the layer is released. */
export const temporaryStore = (onDirectory: (dir: string) => void = () => {}) =>
  Layer.unwrapScoped(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "hosting-objects-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(Effect.map((dir) => {
      onDirectory(dir)
      return FsObjectStore.layer({ directory: dir })
    }))
  )
