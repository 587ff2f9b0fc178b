/**
 * How the compiled app (`ApiApp.ts`) decodes requests and encodes answers
 * from an endpoint's schemas, as the platform's router does, synchronously
 * where the schema allows it.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpMethod from "@effect/platform/HttpMethod"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Multipart from "@effect/platform/Multipart"
import * as UrlParams from "@effect/platform/UrlParams"
import { Effect, type Option, ParseResult, Schema, type SchemaAST } from "effect"
import * as CompiledDecoder from "./compiledDecoder.js"
import { encoderOf } from "./compiledEncoder.js"
import * as JsonAnswer from "./jsonAnswer.js"

/**
 * A decoder that answers synchronously when it can. Called, it gives an
 * effect: the value at once, or, where the value is refused or the schema
 * needs effects, the platform's decoding, so that a failure is the same
 * `ParseError` as the platform's. `now` gives the value without an effect,
 * or `refused` where the call would go to the platform's decoding.
 */
export interface Decode {
  (input: unknown): Effect.Effect<any, ParseResult.ParseError>
  readonly now: (input: unknown) => unknown
}

/** What `Decode.now` gives for a value it cannot decode without effects, or refuses. */
export const refused: unique symbol = Symbol("@hosting/http/apiCodecs/refused")

export const decoderOf = (schema: Schema.Schema.Any): Decode => {
  // Compiled once (compiledDecoder.ts); the schema's own decoders take what it leaves.
  const sync = CompiledDecoder.decoderOf(schema)
  const full = Schema.decodeUnknown(schema as Schema.Schema<any, any, never>)
  const now = (input: unknown): unknown => {
    const result = sync(input)
    return result._tag === "Right" ? result.right : refused
  }
  return Object.assign((input: unknown) => {
    const value = now(input)
    return value === refused ? full(input) : Effect.succeed(value)
  }, { now })
}

/** One success (or error) schema of an endpoint, with how its values become an answer. */
export interface Answer {
  readonly is: (value: unknown) => boolean
  readonly encode: (value: unknown) => Effect.Effect<HttpServerResponse.HttpServerResponse, ParseResult.ParseError>
}

const jsonFailed = (ast: SchemaAST.AST, value: unknown, error: unknown) =>
  new ParseResult.ParseError({ issue: new ParseResult.Type(ast, value, `Could not encode to JSON: ${String(error)}`) })

/** The answer of an encoded value, by the schema's status and encoding annotations (as the platform makes it). */
const responder = (ast: SchemaAST.AST, status: number) => {
  if (HttpApiSchema.isVoid(ast)) return () => Effect.succeed(HttpServerResponse.empty({ status }))
  const encoding = HttpApiSchema.getEncoding(ast)
  const options = { status, contentType: encoding.contentType }
  switch (encoding.kind) {
    case "Json":
      return (encoded: unknown) => {
        try {
          return Effect.succeed(JsonAnswer.json(encoded, options))
        } catch (error) {
          return Effect.fail(jsonFailed(ast, encoded, error))
        }
      }
    case "Text":
      return (encoded: unknown) => Effect.succeed(HttpServerResponse.text(encoded as string, options))
    case "Uint8Array":
      return (encoded: unknown) => Effect.succeed(HttpServerResponse.uint8Array(encoded as Uint8Array, options))
    case "UrlParams":
      return (encoded: unknown) => Effect.succeed(HttpServerResponse.urlParams(encoded as UrlParams.Input, options))
  }
}

export const answerOf = (schema: Schema.Schema.Any, statusOf: (ast: SchemaAST.AST) => number): Answer => {
  const typed = schema as Schema.Schema<any, any, never>
  // Compiled once (compiledEncoder.ts); the schema's own encoders take what it leaves.
  const sync = encoderOf(typed)
  const full = Schema.encodeUnknown(typed)
  const respond = responder(schema.ast, statusOf(schema.ast))
  return {
    is: Schema.is(Schema.typeSchema(typed)),
    encode: (value) => {
      const result = sync(value)
      return result._tag === "Right" ? respond(result.right) : Effect.flatMap(full(value), respond)
    }
  }
}

/** How the values of a (possibly union) schema are answered: by the first member whose type the value has. */
export const answersOf = (schema: Schema.Schema.Any, statusOf: (ast: SchemaAST.AST) => number) => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, schema)
  const answers = Array.from(members, (member) => answerOf(member, statusOf))
  if (answers.length === 1) return answers[0]!.encode
  return (value: unknown) => (answers.find((answer) => answer.is(value)) ?? answers[0]!).encode(value)
}

/** Whether a url parameter of the schema takes one string (else a lone value becomes an array, as the platform does). */
const takesOneString = (ast: SchemaAST.AST, key?: PropertyKey): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "Literal":
    case "TemplateLiteral":
    case "Enums":
      return true
    case "TypeLiteral": {
      if (key === undefined) return false
      const property = ast.propertySignatures.find((signature) => signature.name === key)
      return property !== undefined
        ? takesOneString(property.type, key)
        : ast.indexSignatures.some((index) =>
          Schema.is(Schema.make(index.parameter))(key) && takesOneString(index.type)
        )
    }
    case "Union":
      return ast.types.some((type) => takesOneString(type, key))
    case "Suspend":
      return takesOneString(ast.f(), key)
    case "Refinement":
    case "Transformation":
      return takesOneString(ast.from, key)
    default:
      return false
  }
}

export const urlParamsFor = (ast: SchemaAST.AST) => (params: Readonly<Record<string, string | ReadonlyArray<string>>>) => {
  const out: Record<string, string | ReadonlyArray<string>> = {}
  for (const key in params) {
    const value = params[key]!
    out[key] = Array.isArray(value) || takesOneString(ast, key) ? value : [value as string]
  }
  return out
}

/** The body of a request as the endpoint's payload schema expects it, read by its content type. */
export const bodyOf = (
  request: HttpServerRequest.HttpServerRequest,
  query: Readonly<Record<string, string | ReadonlyArray<string>>>,
  limits: Option.Option<Multipart.withLimits.Options>
): Effect.Effect<unknown, never, any> => {
  if (!HttpMethod.hasBody(request.method)) return Effect.succeed(query)
  const type = request.headers["content-type"]?.toLowerCase().trim() ?? "application/json"
  if (type.includes("application/json")) return Effect.orDie(request.json)
  if (type.includes("multipart/form-data")) {
    return Effect.orDie(limits._tag === "Some" ? Multipart.withLimits(request.multipart, limits.value) : request.multipart)
  }
  if (type.includes("x-www-form-urlencoded")) return Effect.map(Effect.orDie(request.urlParamsBody), UrlParams.toRecord)
  if (type.startsWith("text/")) return Effect.orDie(request.text)
  return Effect.map(Effect.orDie(request.arrayBuffer), (buffer) => new Uint8Array(buffer))
}
