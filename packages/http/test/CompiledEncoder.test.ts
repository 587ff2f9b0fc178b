/**
 * The compiled encoders of answers (internal/compiledEncoder.ts) against
 * the schemas' own encoders, the reference: for every success and error
 * schema of HostingApi, values generated from the schema encode to the same
 * JSON both ways; values the schema refuses fail the same way.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { HostingApi } from "@hosting/api"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, DateTime, Either, FastCheck as fc, Option, ParseResult, Schema } from "effect"
import * as ApiRoutes from "../src/ApiRoutes.js"
import { compile, encoderOf, Mismatch } from "../src/internal/compiledEncoder.js"

/** Every member schema of the API's success and error schemas, once. */
const answerSchemas = (): ReadonlyArray<Schema.Schema.Any> => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, HostingApi.HostingApi.errorSchema as Schema.Schema.Any)
  for (const route of ApiRoutes.routes) {
    HttpApiSchema.deunionize(members, route.endpoint.successSchema)
    HttpApiSchema.deunionize(members, route.endpoint.errorSchema)
  }
  return [...members]
}

const nameOf = (schema: Schema.Schema.Any) => String(schema.ast).slice(0, 80)

/** Values of the schema's type, when Effect can generate them. */
const valuesOf = (schema: Schema.Schema.Any): fc.Arbitrary<unknown> | undefined => {
  try {
    return Arbitrary.make(schema as Schema.Schema<unknown, unknown, never>)
  } catch {
    return undefined
  }
}

/**
 * Encodes `runs` generated values of the schema with `encode` and with the
 * schema's encoder: both succeed with the same JSON, or both fail. Answers
 * how many values were compared (none when Effect cannot generate any).
 */
const compareWithSchema = (
  schema: Schema.Schema.Any,
  encode: ReturnType<typeof encoderOf>,
  runs: number,
  seed: number
): number => {
  const values = valuesOf(schema)
  if (values === undefined) return 0
  const reference = ParseResult.encodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>)
  const sample = fc.sample(values, { numRuns: runs, seed })
  for (const value of sample) {
    const expected = reference(value)
    const actual = encode(value)
    expect(Either.isRight(actual), nameOf(schema)).toBe(Either.isRight(expected))
    if (Either.isRight(expected) && Either.isRight(actual)) {
      expect(JSON.stringify(actual.right), nameOf(schema)).toBe(JSON.stringify(expected.right))
    }
  }
  return sample.length
}

describe("compiled encoders of answers (the schema's encoder is the reference)", () => {
  const schemas = answerSchemas()

  it("every answer schema of the API that Effect can generate values for encodes them as the schema does", () => {
    let compared = 0
    let compiled = 0
    for (const schema of schemas) {
      if (compile(schema) !== undefined) compiled++
      compared += compareWithSchema(schema, encoderOf(schema), 25, 24)
    }
    // The check above must have compared something real: most answers compile and are generated.
    expect(compiled).toBeGreaterThan(schemas.length * 0.8)
    expect(compared).toBeGreaterThan(schemas.length * 0.5 * 25)
  })

  it("where functions cannot be made from text, the encoders are closures that encode the same", () => {
    // As under `node --disallow-code-generation-from-strings`: `new Function` throws.
    const original = globalThis.Function
    const refusing = function() {
      throw new EvalError("Code generation from strings disallowed for this context")
    } as unknown as FunctionConstructor
    const made: Array<readonly [Schema.Schema.Any, ReturnType<typeof encoderOf>]> = []
    const probe = Schema.Struct({ a: Schema.Number, b: Schema.optional(Schema.String) })
    // Made from text, a struct's encoder is the function the source names.
    expect(compile(probe)!.name).toBe("encodeStruct")
    globalThis.Function = refusing
    try {
      expect(compile(probe)!.name).not.toBe("encodeStruct")
      expect(compile(probe)!({ a: 1, b: "x", c: true })).toEqual({ a: 1, b: "x" })
      for (const schema of schemas) made.push([schema, encoderOf(schema)])
    } finally {
      globalThis.Function = original
    }
    let compared = 0
    for (const [schema, encode] of made) compared += compareWithSchema(schema, encode, 5, 7)
    expect(compared).toBeGreaterThan(schemas.length * 0.5 * 5)
  })

  it("the answers of the routes the reads bench measures are compiled, not left to the schema", () => {
    for (const id of ["chat.list", "chat.history", "accounts.me", "publicAgents.get", "deployments.history", "deployments.list"]) {
      const route = ApiRoutes.routes.find((candidate) => candidate.id === id)
      expect(route, id).toBeDefined()
      const members = new Set<Schema.Schema.Any>()
      HttpApiSchema.deunionize(members, route!.endpoint.successSchema)
      for (const member of members) expect(compile(member), `${id}: ${nameOf(member)}`).toBeDefined()
    }
  })

  it("keeps only the declared properties, and encodes dates and options as the schema does", () => {
    class Item extends Schema.Class<Item>("Item")({
      at: Schema.DateTimeUtc,
      note: Schema.OptionFromNullOr(Schema.String),
      tags: Schema.Array(Schema.Literal("a", "b")),
      extra: Schema.optional(Schema.Number)
    }) {}
    const schema = Schema.Struct({ items: Schema.Array(Item), count: Schema.Number })
    const value = {
      items: [
        new Item({ at: DateTime.unsafeMake("2026-11-27T10:00:00Z"), note: Option.some("hi"), tags: ["a"] }),
        new Item({ at: DateTime.unsafeMake("2026-11-27T11:00:00Z"), note: Option.none(), tags: [], extra: 2 })
      ],
      count: 2,
      secret: "not declared"
    }
    const encoded = compile(schema)!(value)
    expect(encoded).toEqual(Schema.encodeSync(schema)(value))
    expect(encoded).toEqual({
      items: [
        { at: "2026-11-27T10:00:00.000Z", note: "hi", tags: ["a"] },
        { at: "2026-11-27T11:00:00.000Z", note: null, tags: [], extra: 2 }
      ],
      count: 2
    })
  })

  it("a value the schema refuses is left to the schema, which fails with its own error", () => {
    const schema = Schema.Struct({ name: Schema.NonEmptyString, kind: Schema.Literal("x", "y") })
    const compiled = compile(schema)!
    expect(() => compiled({ name: "", kind: "x" })).toThrow(Mismatch)
    expect(() => compiled({ name: "n", kind: "z" })).toThrow(Mismatch)
    const refused = encoderOf(schema)({ name: "", kind: "x" })
    const expected = ParseResult.encodeUnknownEither(schema)({ name: "", kind: "x" })
    expect(Either.isLeft(refused)).toBe(true)
    expect(String(Either.getLeft(refused).pipe(Option.getOrThrow))).toBe(String(Either.getLeft(expected).pipe(Option.getOrThrow)))
  })

  it("renamed and defaulted keys are encoded as the schema encodes them, in the encoded side's order", () => {
    const schema = Schema.Struct({
      first: Schema.String,
      renamed: Schema.propertySignature(Schema.Number).pipe(Schema.fromKey("wire_name")),
      defaulted: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
      last: Schema.Boolean
    })
    const value = { first: "a", renamed: 1, defaulted: "d", last: true }
    const encoded = compile(schema)!(value)
    expect(JSON.stringify(encoded)).toBe(JSON.stringify(Schema.encodeSync(schema)(value)))
    expect(Object.keys(encoded as object)).toEqual(["first", "wire_name", "defaulted", "last"])
    // The value given is read, never changed.
    expect(value).toEqual({ first: "a", renamed: 1, defaulted: "d", last: true })
  })

  it("a key a step leaves out is left out of the answer, and nothing of the value given is changed", () => {
    const schema = Schema.Struct({
      id: Schema.String,
      note: Schema.optionalWith(Schema.String, { as: "Option" }),
      renamed: Schema.optionalWith(Schema.Number, { as: "Option" }).pipe(Schema.fromKey("wire"))
    })
    const compiled = compile(schema)!
    for (const value of [
      { id: "a", note: Option.none(), renamed: Option.none() },
      { id: "b", note: Option.some("n"), renamed: Option.none() },
      { id: "c", note: Option.none(), renamed: Option.some(2) },
      { id: "d", note: Option.some("m"), renamed: Option.some(3) }
    ]) {
      const given = { ...value }
      const encoded = compiled(value)
      expect(JSON.stringify(encoded), value.id).toBe(JSON.stringify(Schema.encodeSync(schema)(value)))
      expect(Object.keys(encoded as object), value.id).toEqual(Object.keys(Schema.encodeSync(schema)(value)))
      expect(value, value.id).toEqual(given)
    }
    expect(compiled({ id: "e", note: Option.none(), renamed: Option.none() })).toEqual({ id: "e" })
  })

  it("keys moved onto keys that other steps move are encoded one step after the other, as the schema does", () => {
    // `a` is written under `b`, and `b` under `c`: such steps are not taken in one pass.
    const schema = Schema.Struct({
      a: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("b")),
      b: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("c"))
    })
    const value = { a: "from a", b: "from b" }
    const expected = ParseResult.encodeUnknownEither(schema)(value)
    const actual = encoderOf(schema)(value)
    expect(Either.isRight(actual)).toBe(Either.isRight(expected))
    expect(JSON.stringify(Either.getOrUndefined(actual))).toBe(JSON.stringify(Either.getOrUndefined(expected)))
  })

  it("encodes a date once: the same date object gives the same text, another date its own", () => {
    const schema = Schema.Struct({ at: Schema.DateTimeUtc, again: Schema.DateTimeUtc, other: Schema.DateTimeUtc })
    const encode = compile(schema)!
    const at = DateTime.unsafeMake("2026-11-28T10:00:00Z")
    const first = encode({ at, again: at, other: DateTime.unsafeMake("2026-11-28T10:00:00.001Z") })
    expect(first).toEqual({ at: "2026-11-28T10:00:00.000Z", again: "2026-11-28T10:00:00.000Z", other: "2026-11-28T10:00:00.001Z" })
    const second = encode({ at: DateTime.unsafeMake("2027-01-01T00:00:00Z"), again: at, other: at })
    expect(second).toEqual({ at: "2027-01-01T00:00:00.000Z", again: "2026-11-28T10:00:00.000Z", other: "2026-11-28T10:00:00.000Z" })
    // What is not a date is still refused, kept or not: the text of a date, a plain object.
    expect(() => encode({ at: "2026-11-28T10:00:00.000Z", again: at, other: at })).toThrow(Mismatch)
    expect(() => encode({ at, again: {}, other: at })).toThrow(Mismatch)
  })

  it("tells the members of a union apart as the schema does, refinements included", () => {
    const Short = Schema.String.pipe(Schema.maxLength(3))
    const schema = Schema.Struct({
      value: Schema.Union(Schema.Null, Schema.Literal(7), Short, Schema.Number.pipe(Schema.positive()), Schema.Boolean)
    })
    const compiled = compile(schema)!
    for (const value of [null, 7, "abc", 5, true, false]) {
      expect(compiled({ value })).toEqual(Schema.encodeSync(schema)({ value } as never))
    }
    // A date or nothing: the date's own check tells them apart, and what is neither is refused.
    const ended = Schema.Struct({ at: Schema.NullOr(Schema.DateTimeUtc) })
    const at = DateTime.unsafeMake("2026-12-07T10:00:00Z")
    expect(compile(ended)!({ at })).toEqual({ at: "2026-12-07T10:00:00.000Z" })
    expect(compile(ended)!({ at: null })).toEqual({ at: null })
    expect(() => compile(ended)!({ at: "2026-12-07T10:00:00.000Z" })).toThrow(Mismatch)
    // Refused by every member: the schema fails, and so does the compiled encoder (the schema then answers).
    for (const value of ["abcd", -1, undefined, {}]) {
      expect(() => compiled({ value })).toThrow(Mismatch)
      expect(Either.isLeft(encoderOf(schema)({ value }))).toBe(true)
    }
  })
})
