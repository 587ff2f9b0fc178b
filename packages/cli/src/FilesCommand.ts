/**
 * `hosting files upload|download|list`: files of a deployment, with a
 * progress report on stderr.
 */
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeSink from "@effect/platform-node/NodeSink"
import { FileTransfer } from "@hosting/client"
import type { Deployment } from "@hosting/core"
import { Effect, Option, Stream } from "effect"
import * as Arguments from "./Arguments.js"
import * as DeploymentRefs from "./DeploymentRefs.js"
import { CliFailure, usage, usageError } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** Content types of common extensions; anything else is sent as bytes. */
const contentTypes: Record<string, string> = {
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".json": "application/json",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".html": "text/html",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".svg": "image/svg+xml",
  ".zip": "application/zip"
}

const localFailure = (what: string) => (error: unknown) =>
  new CliFailure({ exitCode: usage, error: "local_file_error", details: `${what}: ${error instanceof Error ? error.message : String(error)}` })

const list = Command.make("list", { deployment: Arguments.deployment }, ({ deployment: ref }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const found = yield* session.client.files.list({ path: { deploymentId: deployment } })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.table([
      { header: "KEY", value: (f) => f.key },
      { header: "NAME", value: (f) => f.filename },
      { header: "SIZE", value: (f) => String(f.size), right: true },
      { header: "TYPE", value: (f) => f.content_type },
      { header: "STATUS", value: (f) => f.status },
      { header: "ORIGIN", value: (f) => f.origin },
      { header: "CREATED", value: (f) => Output.date(f.created_at) }
    ], found.files))
  })).pipe(Command.withDescription("Your files on a deployment, newest first"))

const upload = Command.make("upload", {
  deployment: Arguments.deployment,
  file: Args.file({ name: "file", exists: "yes" }),
  name: Options.text("name").pipe(Options.withDescription("The file's name on the server (default: its local name)"), Options.optional),
  contentType: Options.text("content-type").pipe(
    Options.withDescription("Its content type (default: from the extension, else application/octet-stream)"),
    Options.optional
  )
}, ({ contentType, deployment: ref, file, name }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const info = yield* fs.stat(file).pipe(Effect.mapError(localFailure(`cannot read ${file}`)))
    if (info.type !== "File") return yield* usageError(`${file} is not a file`)
    const filename = Option.getOrElse(name, () => path.basename(file))
    const type = Option.getOrElse(contentType, () => contentTypes[path.extname(file).toLowerCase()] ?? "application/octet-stream")
    const uploaded = yield* FileTransfer.upload({
      ...session.options,
      deploymentId: deployment,
      filename,
      contentType: type,
      size: Number(info.size),
      content: fs.stream(file, { chunkSize: FileSystem.KiB(64) }),
      onProgress: Output.progress(`upload ${filename}`)
    })
    if (session.json) return yield* Output.json(uploaded)
    yield* Output.line(`Uploaded ${uploaded.filename} (${uploaded.size} bytes) as ${uploaded.key}.`)
  })).pipe(Command.withDescription("Upload a file to a deployment: reserve, send the bytes, complete"))

/** A name the server suggested, made safe to create in the current directory. */
const localName = (path: Path.Path, suggested: string) => {
  const base = path.basename(suggested.replace(/\\/g, "/")).replace(/[\u0000-\u001f]/g, "")
  return base === "" || base === "." || base === ".." ? undefined : base
}

/**
 * The key of the file a download names: a key as it is; a name that one
 * file of `files list` has, that file's key; anything else goes to the
 * server as it is (the name of a file the agent produced).
 */
const keyOf = (session: Session.Session, deployment: Deployment.DeploymentId, keyOrName: string) =>
  Effect.gen(function*() {
    const { files } = yield* session.client.files.list({ path: { deploymentId: deployment } })
    if (files.some((f) => f.key === keyOrName)) return keyOrName
    const named = files.filter((f) => f.filename === keyOrName)
    if (named.length === 1) return named[0]!.key
    if (named.length > 1) {
      return yield* usageError(
        `${named.length} files are named ${keyOrName} (${named.map((f) => f.key).join(", ")}); name one by its key`,
        "ambiguous_name"
      )
    }
    return keyOrName
  })

const download = Command.make("download", {
  deployment: Arguments.deployment,
  key: Args.text({ name: "key-or-name" }).pipe(
    Args.withDescription("The file's key, or its name as `hosting files list` shows it (else the name of a file the agent produced)")
  ),
  output: Options.text("output").pipe(
    Options.withAlias("o"),
    Options.withDescription("Where to write it; - for stdout (default: the file's name, in the current directory)"),
    Options.optional
  ),
  force: Options.boolean("force").pipe(Options.withDescription("Overwrite an existing file"))
}, ({ deployment: ref, force, key, output }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const fileKey = yield* keyOf(session, deployment, key)
    // The name is known once the answer came, before the first byte is reported.
    let label = `download ${key}`
    const result = yield* Effect.scoped(Effect.gen(function*() {
      const opened = yield* FileTransfer.download({
        ...session.options,
        deploymentId: deployment,
        fileKey,
        onProgress: Output.progress(() => label)
      })
      const name = opened.filename ?? key
      label = `download ${name}`
      if (Option.isSome(output) && output.value === "-") {
        yield* opened.stream.pipe(
          Stream.run(NodeSink.fromWritable(() => process.stdout, localFailure("cannot write to stdout"), { endOnDone: false }))
        )
        return { filename: name, path: "-", size: opened.size, content_type: opened.contentType }
      }
      const target = Option.isSome(output) ? output.value : localName(path, name) ?? localName(path, key)
      if (target === undefined) return yield* usageError(`the file has no usable name; pass --output`)
      if (!force && (yield* fs.exists(target).pipe(Effect.orElseSucceed(() => false)))) {
        return yield* usageError(`${target} exists; pass --force to overwrite it`, "file_exists")
      }
      // Written beside the target and renamed at the end: an interrupted download leaves no half file under its name.
      const partial = `${target}.part`
      yield* opened.stream.pipe(
        Stream.run(fs.sink(partial)),
        Effect.zipRight(fs.rename(partial, target)),
        Effect.tapError(() => fs.remove(partial).pipe(Effect.ignore)),
        Effect.onInterrupt(() => fs.remove(partial).pipe(Effect.ignore))
      )
      return { filename: name, path: target, size: opened.size, content_type: opened.contentType }
    }))
    if (result.size === undefined) yield* Output.endProgress
    const message = `Downloaded ${result.filename}${result.size === undefined ? "" : ` (${result.size} bytes)`}`
    // The bytes went to stdout: nothing else may.
    if (result.path === "-") return yield* Output.note(session.json ? Output.toJson({ key, ...result }) : `${message}.`)
    if (session.json) return yield* Output.json({ key, ...result })
    yield* Output.line(`${message} to ${result.path}.`)
  })).pipe(Command.withDescription("Download a file of a deployment (following redirects to the object store)"))

export const command = Command.make("files").pipe(
  Command.withDescription("Files of a deployment"),
  Command.withSubcommands([upload, download, list])
)
