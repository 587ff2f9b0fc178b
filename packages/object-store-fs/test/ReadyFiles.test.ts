/** A ready file's bytes never change (ReadyFilesSuite), on the file-system store. */
import { ReadyFilesSuite } from "@hosting/testing"
import { temporaryStore } from "./TemporaryStore.js"

ReadyFilesSuite.run("file system", temporaryStore(), { presigns: false })
