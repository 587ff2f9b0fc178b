/**
 * What the tests that run command-line tools (kubectl, openssl) against the
 * API server double share: finding a program, running it, a scratch folder,
 * a certificate.
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"

/** The program's path when it is an executable on PATH. */
export const onPath = (program: string) =>
  (process.env["PATH"] ?? "").split(delimiter).filter((dir) => dir !== "").map((dir) => join(dir, program)).find((file) => {
    try {
      accessSync(file, constants.X_OK)
      return true
    } catch {
      return false
    }
  })

/** Runs a program to its end (30 s at most) and succeeds with its stdout; a failure carries its stderr. */
export const run = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<string, Error>((resume) => {
    const child = execFile(file, [...args], { timeout: 30_000, env, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      resume(error === null ? Effect.succeed(stdout) : Effect.fail(new Error(`${file} ${args.join(" ")}: ${error.message}\n${stderr}`)))
    })
    return Effect.sync(() => child.kill())
  })

/** A scratch folder that is removed with the scope. */
export const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "hosting-kube-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A self-signed certificate for 127.0.0.1, which is its own CA, made with openssl in `dir`. */
export const certificate = (openssl: string, dir: string) =>
  Effect.gen(function*() {
    const keyFile = join(dir, "key.pem")
    const certFile = join(dir, "cert.pem")
    yield* run(openssl, [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", keyFile, "-out", certFile, "-days", "1",
      "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"
    ], { PATH: process.env["PATH"] ?? "" })
    return { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8") }
  })
