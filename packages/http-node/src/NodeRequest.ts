/**
 * The platform's `HttpServerRequest` over a Node request, made once per
 * request with nothing computed until a handler asks: headers are Node's own
 * object, the body is read once on first use (whichever reading asks), under
 * the limit in context (`HttpIncomingMessage.MaxBodySize`).
 *
 * Past its limit a body is refused (`RequestError` with reason `Decode`,
 * whose cause says `maxBytes exceeded`, as the platform's own reading says),
 * and the rest of it is read and dropped instead of the connection being
 * destroyed, so that a client still sending gets the answer.
 */
import type * as Headers from "@effect/platform/Headers"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import type * as Multipart from "@effect/platform/Multipart"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Cookies from "@effect/platform/Cookies"
import * as NodeMultipart from "@effect/platform-node/NodeMultipart"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Context, Effect, Exit, Inspectable, Option, type Stream } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"

/** The failure of a body read past its limit (its message is the one the platform's reading uses, which error answers recognise). */
export const tooLarge = (): Error => new Error("maxBytes exceeded")

const asBytes = (bytes: Buffer): Buffer => bytes
const asText = (bytes: Buffer): string => bytes.toString("utf8")

/** What reading a body ends with: its bytes, or why there are none. */
type Read = Exit.Exit<Buffer, HttpServerError.RequestError>

/**
 * Reads a Node body to its end, or to `limit` bytes, then calls `done`
 * once. Past the limit, what still comes is read and dropped.
 */
export const readBody = (source: IncomingMessage, limit: number, done: (result: Buffer | Error) => void): void => {
  const chunks: Array<Buffer> = []
  let bytes = 0
  let settled = false
  const settle = (result: Buffer | Error) => {
    if (settled) return
    settled = true
    source.off("data", onData)
    source.off("end", onEnd)
    source.off("error", onError)
    done(result)
  }
  function onData(chunk: Buffer) {
    bytes += chunk.length
    if (bytes <= limit) return void chunks.push(chunk)
    settle(tooLarge())
    // Flowing without a listener, the stream drops the rest instead of stalling the connection.
    source.resume()
  }
  function onEnd() {
    settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
  }
  function onError(error: Error) {
    settle(error)
  }
  source.on("data", onData)
  source.once("end", onEnd)
  source.once("error", onError)
}

/** The state a request and its modified copies share: the body is read once for all of them. */
interface Shared {
  /** The body's reading, once started (a promise: a `Deferred` costs more than reading a small body). */
  reading: Promise<Read> | undefined
  multipart: Effect.Effect<Multipart.Persisted, Multipart.MultipartError, any> | undefined
}

export class NodeRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  private cachedCookies: Readonly<Record<string, string>> | undefined

  constructor(
    readonly source: IncomingMessage,
    readonly response: ServerResponse,
    readonly url: string = source.url ?? "/",
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string,
    private readonly shared: Shared = { reading: undefined, multipart: undefined }
  ) {
    super()
  }

  get originalUrl(): string {
    return this.source.url ?? "/"
  }

  get method(): HttpMethod {
    return this.source.method as HttpMethod
  }

  get headers(): Headers.Headers {
    return this.headersOverride ?? (this.source.headers as unknown as Headers.Headers)
  }

  get cookies(): Readonly<Record<string, string>> {
    return this.cachedCookies ??= Cookies.parseHeader(this.headers["cookie"] ?? "")
  }

  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }

  private readonly decodeError = (cause: unknown) => new HttpServerError.RequestError({ request: this, reason: "Decode", cause })

  /** The body's bytes, read once under the limit in context when first asked for. */
  get bytes(): Effect.Effect<Buffer, HttpServerError.RequestError> {
    return this.readAs(asBytes)
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return this.readAs(asText)
  }

  /**
   * The body's bytes as `f` makes them, in the step that waits for them: the
   * limit is read from the fiber's context where the reading starts, and the
   * bytes are turned into `f`'s value where they are handed back.
   */
  private readAs<A>(f: (bytes: Buffer) => A): Effect.Effect<A, HttpServerError.RequestError> {
    return Effect.withFiberRuntime((fiber) => {
      let reading = this.shared.reading
      if (reading === undefined) {
        const max = Context.get(fiber.currentContext, HttpIncomingMessage.MaxBodySize)
        const limit = Option.isSome(max) ? Number(max.value) : Number.POSITIVE_INFINITY
        reading = this.shared.reading = new Promise<Read>((settle) =>
          readBody(this.source, limit, (result) =>
            settle(result instanceof Error ? Exit.fail(this.decodeError(result)) : Exit.succeed(result))))
      }
      const read = reading
      // A reader that is interrupted meanwhile is not resumed (Effect drops a resumption after an interruption).
      return Effect.async<A, HttpServerError.RequestError>((resume) =>
        void read.then((exit) => resume(Exit.isSuccess(exit) ? Exit.succeed(f(exit.value)) : exit as Exit.Exit<never, HttpServerError.RequestError>))
      )
    })
  }

  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) => {
      try {
        return Effect.succeed(text === "" ? null : JSON.parse(text))
      } catch (cause) {
        return Effect.fail(this.decodeError(cause))
      }
    })
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: this.decodeError }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.map(this.bytes, (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(() => this.source, this.decodeError)
  }

  get multipart() {
    return this.shared.multipart ??= Effect.runSync(Effect.cached(NodeMultipart.persisted(this.source, this.source.headers)))
  }

  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return NodeMultipart.stream(this.source, this.source.headers)
  }

  get upgrade(): HttpServerRequest.HttpServerRequest["upgrade"] {
    return Effect.fail(this.decodeError("this server does not upgrade connections"))
  }

  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }): NodeRequest {
    return new NodeRequest(
      this.source,
      this.response,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride,
      this.shared
    )
  }

  override toString(): string {
    return `NodeRequest(${this.method} ${this.url})`
  }

  override toJSON(): unknown {
    return { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl }
  }
}
