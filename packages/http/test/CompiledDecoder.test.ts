/**
 * The compiled decoders of requests (internal/compiledDecoder.ts) against
 * the schemas' own decoders, the reference: for every path, query, header
 * and payload schema of HostingApi, inputs made from the schema (valid
 * ones, ones its refinements refuse, ones of the wrong shape) decode to the
 * same value both ways, keys in the same order, or fail both ways.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Either, FastCheck as fc, Option, ParseResult, Schema } from "effect"
import * as ApiRoutes from "../src/ApiRoutes.js"
import { decoderOf as inputDecoderOf } from "../src/internal/apiCodecs.js"
import { compile, decoderOf, Mismatch, Undecided } from "../src/internal/compiledDecoder.js"

const parts = ["pathSchema", "urlParamsSchema", "headersSchema", "payloadSchema"] as const

/** Every request schema of the API (a multipart payload is read as a stream, never decoded whole), with its place. */
const requestSchemas = (): ReadonlyArray<readonly [string, Schema.Schema.Any]> =>
  ApiRoutes.routes.flatMap((route) =>
    parts.flatMap((part) => {
      const schema = Option.getOrUndefined(route.endpoint[part])
      if (schema === undefined) return []
      if (HttpApiSchema.getMultipartStream(schema.ast) !== undefined || HttpApiSchema.getMultipart(schema.ast) !== undefined) return []
      return [[`${route.id} ${part}`, schema] as const]
    })
  )

const sampleOf = (schema: Schema.Schema.Any, runs: number, seed: number): ReadonlyArray<unknown> => {
  try {
    return fc.sample(Arbitrary.make(schema as Schema.Schema<unknown, unknown, never>), { numRuns: runs, seed })
  } catch {
    return []
  }
}

/**
 * Inputs for a schema: its values encoded (what a client sends), inputs of
 * its encoded side without its refinements (many refused), each valid
 * object with one property given another value, and a few of no shape.
 */
const inputsOf = (schema: Schema.Schema.Any, runs: number, seed: number): ReadonlyArray<unknown> => {
  const encode = ParseResult.encodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>)
  const valid = sampleOf(schema, runs, seed).flatMap((value) => {
    const encoded = encode(value)
    return Either.isRight(encoded) ? [encoded.right] : []
  })
  const unrefined = sampleOf(Schema.encodedSchema(schema), runs, seed + 1)
  const changed = valid.slice(0, 5).flatMap((input) =>
    typeof input === "object" && input !== null && !Array.isArray(input)
      ? Object.keys(input).flatMap((key) =>
        [1, "", null, undefined, [], {}, "x".repeat(300)].map((other) => ({ ...input, [key]: other }))
      ).concat([{ ...input, not_declared: "extra" }])
      : []
  )
  return [...valid, ...unrefined, ...changed, undefined, null, "text", 7, [], {}]
}

/** A copy, so that neither decoder sees what the other may have done to the input. */
const copyOf = (input: unknown): unknown => input === undefined ? undefined : JSON.parse(JSON.stringify(input))

/** Decodes every input both ways and expects the same answer; answers how many inputs the schema took. */
const compareWithSchema = (name: string, schema: Schema.Schema.Any, inputs: ReadonlyArray<unknown>): number => {
  const reference = ParseResult.decodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>)
  const decode = decoderOf(schema)
  let taken = 0
  for (const input of inputs) {
    const expected = reference(copyOf(input))
    const actual = decode(copyOf(input))
    expect(Either.isRight(actual), `${name}: ${JSON.stringify(input)}`).toBe(Either.isRight(expected))
    if (Either.isRight(expected) && Either.isRight(actual)) {
      taken++
      expect(actual.right, name).toStrictEqual(expected.right)
      expect(JSON.stringify(actual.right), name).toBe(JSON.stringify(expected.right))
    } else if (Either.isLeft(expected) && Either.isLeft(actual)) {
      expect(String(actual.left), name).toBe(String(expected.left))
    }
  }
  return taken
}

describe("compiled decoders of requests (the schema's decoder is the reference)", () => {
  const schemas = requestSchemas()

  it("every request schema of the API decodes what it is sent as the schema does, and refuses what the schema refuses", () => {
    let compiled = 0
    let taken = 0
    let compared = 0
    for (const [name, schema] of schemas) {
      if (compile(schema) !== undefined) compiled++
      const inputs = inputsOf(schema, 30, 34)
      compared += inputs.length
      taken += compareWithSchema(name, schema, inputs)
    }
    // Something real was compared: most request schemas compile, and many inputs decode.
    expect(compiled).toBeGreaterThan(schemas.length * 0.85)
    expect(taken).toBeGreaterThan(schemas.length * 20)
    expect(compared - taken).toBeGreaterThan(schemas.length * 20)
  })

  it("the requests of the flow and reads benches decode compiled, not by the schema", () => {
    const ids = ["chat.send", "chat.stream", "chat.history", "chat.list", "publicAgents.get", "accounts.me", "deployments.history"]
    for (const id of ids) {
      const route = ApiRoutes.routes.find((candidate) => candidate.id === id)
      expect(route, id).toBeDefined()
      for (const part of parts) {
        const schema = Option.getOrUndefined(route!.endpoint[part])
        if (schema !== undefined) expect(compile(schema), `${id} ${part}`).toBeDefined()
      }
    }
  })

  it("a union takes its first member that decodes; a member that refuses passes the input on", () => {
    const schema = Schema.Struct({
      limit: Schema.Union(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), Schema.Literal("all"), Schema.String)
    })
    const decode = compile(schema)!
    expect(decode({ limit: "12" })).toStrictEqual({ limit: 12 })
    // "-3" is a number the refinement refuses, so the last member takes the text; so does "all" the literal.
    expect(decode({ limit: "-3" })).toStrictEqual({ limit: "-3" })
    expect(decode({ limit: "all" })).toStrictEqual({ limit: "all" })
    expect(() => decode({ limit: 3 })).toThrow(Mismatch)
    for (const input of [{ limit: "12" }, { limit: "-3" }, { limit: "all" }, { limit: 3 }]) {
      expect(decoderOf(schema)(input)).toStrictEqual(ParseResult.decodeUnknownEither(schema)(input))
    }
  })

  it("a step that needs effects leaves the input to the schema, which decodes or fails as it would", async () => {
    const Later = Schema.transformOrFail(Schema.String, Schema.String, {
      decode: (text) => Effect.succeed(text.toUpperCase()),
      encode: (text) => Effect.succeed(text.toLowerCase())
    })
    const schema = Schema.Struct({ name: Schema.Union(Later, Schema.String) })
    const decode = compile(schema)!
    // The union does not go on to its next member, which would take the text as it is.
    expect(() => decode({ name: "abc" })).toThrow(Undecided)
    // Refused by both members: refused.
    expect(() => decode({ name: 1 })).toThrow(Mismatch)
    // Through the app's decoder, the schema answers: synchronously here, as its effect needs nothing.
    const input = inputDecoderOf(schema)
    expect(await Effect.runPromise(input({ name: "abc" }))).toStrictEqual({ name: "ABC" })
    const refused = await Effect.runPromise(Effect.either(input({ name: 1 })))
    expect(Either.isLeft(refused)).toBe(true)
  })

  it("a union told apart by a literal property, and a schema with parse options of its own, stay with the schema", () => {
    const tagged = Schema.Union(
      Schema.Struct({ kind: Schema.Literal("a"), value: Schema.String }),
      Schema.Struct({ kind: Schema.Literal("b"), value: Schema.Number })
    )
    expect(compile(tagged)).toBeUndefined()
    // The schema tries the member its literal names before the others, whatever their order.
    const untaggedFirst = Schema.Struct({
      choice: Schema.Union(Schema.Struct({ value: Schema.String }), Schema.Struct({ kind: Schema.Literal("a"), value: Schema.String }))
    })
    const input = { choice: { kind: "a", value: "x" } }
    expect(decoderOf(untaggedFirst)(input)).toStrictEqual(Either.right(input))
    expect(decoderOf(untaggedFirst)(input)).toStrictEqual(ParseResult.decodeUnknownEither(untaggedFirst)(input))
    const strict = Schema.Struct({ name: Schema.String }).annotations({ parseOptions: { onExcessProperty: "error" } })
    expect(compile(strict)).toBeUndefined()
    expect(Either.isLeft(decoderOf(strict)({ name: "n", other: 1 }))).toBe(true)
  })

  it("keeps the declared properties in the schema's order and decodes defaults and renamed keys as the schema does", () => {
    const schema = Schema.Struct({
      b: Schema.String,
      a: Schema.optional(Schema.NumberFromString),
      limit: Schema.optionalWith(Schema.NumberFromString, { default: () => 20 }),
      renamed: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("wire_name"))
    })
    const decode = compile(schema)!
    for (const input of [{ a: "1", b: "x", wire_name: "w", extra: true }, { wire_name: "w", b: "y", limit: "5" }]) {
      const given = { ...input }
      const decoded = decode(input)
      const expected = Schema.decodeUnknownSync(schema)(input)
      expect(decoded).toStrictEqual(expected)
      expect(Object.keys(decoded as object)).toEqual(Object.keys(expected))
      expect(input).toEqual(given)
    }
  })
})
