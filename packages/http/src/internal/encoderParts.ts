/**
 * The parts the compiled encoders (`compiledEncoder.ts`) and decoders
 * (`compiledDecoder.ts`) are made of: the mismatch that leaves a value to
 * the schema's own encoder or decoder, functions made from their own source
 * text, the keywords' functions, and a struct's function written out (a
 * struct decodes as it encodes: each declared property read and written by
 * name).
 */
import { Either, type ParseResult, type SchemaAST } from "effect"

/** Thrown when a value should be encoded (or an input decoded) by the schema's own function: the schema refuses it. */
export class Mismatch extends Error {
  constructor() {
    super("the compiled encoder leaves this value to the schema")
  }
}

const mismatch = new Mismatch()

export const fail = (): never => {
  throw mismatch
}

export type Encode = (value: unknown) => unknown

export const isRecord = (value: unknown): value is Record<PropertyKey, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A function built from its own source text. V8 keeps type feedback per
 * function literal, so the closures one literal makes (one per node of a
 * kind) share one record of what they met: across the nodes of an answer,
 * every call and property access in them sees many shapes and takes V8's
 * slowest path. A function made here has feedback of its own. The source is
 * ours; the only text from a schema in it is a property name, written as a
 * JSON string literal. Where the platform refuses to make functions from text
 * (`--disallow-code-generation-from-strings`), `fallback` is used instead.
 */
export const ownFunction = <F>(names: ReadonlyArray<string>, body: string, args: ReadonlyArray<unknown>, fallback: () => F): F => {
  try {
    return new Function(...names, body)(...args) as F
  } catch {
    return fallback()
  }
}

export const leaf = (check: (value: unknown) => boolean): Encode =>
  ownFunction(["check", "fail"], "return (value) => check(value) ? value : fail()", [check, fail], () => (value) =>
    check(value) ? value : fail())

/**
 * A keyword's or a literal's function, the same both ways (a value of its
 * type is taken as it is, any other refused); undefined for any other node.
 */
export const keyword = (ast: SchemaAST.AST): Encode | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return leaf((value) => typeof value === "string")
    case "NumberKeyword":
      return leaf((value) => typeof value === "number")
    case "BooleanKeyword":
      return leaf((value) => typeof value === "boolean")
    case "BigIntKeyword":
      return leaf((value) => typeof value === "bigint")
    case "UndefinedKeyword":
      return leaf((value) => value === undefined)
    case "UnknownKeyword":
    case "AnyKeyword":
      return (value) => value
    case "Literal":
      return leaf((value) => value === ast.literal)
    default:
      return undefined
  }
}

/**
 * The compiled function where there is one and it answers, else the
 * schema's own (`Either`): for a value it throws on (refused, undecided, or
 * anything a step threw on a value it did not expect), the schema answers,
 * or throws, as it would.
 */
export const withReference = (
  compiled: Encode | undefined,
  reference: (value: unknown) => Either.Either<unknown, ParseResult.ParseIssue>
): (value: unknown) => Either.Either<unknown, ParseResult.ParseIssue> =>
  compiled === undefined ? reference : (value) => {
    try {
      return Either.right(compiled(value))
    } catch {
      return reference(value)
    }
  }

/** The check of a leaf a struct's encoder does in place of a call, as source over `v`; undefined for any other node. */
export const inlineCheck = (ast: SchemaAST.AST): string | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return `typeof v === "string"`
    case "NumberKeyword":
      return `typeof v === "number"`
    case "BooleanKeyword":
      return `typeof v === "boolean"`
    case "Literal":
      return ast.literal === null || typeof ast.literal === "boolean" || typeof ast.literal === "string" ||
          (typeof ast.literal === "number" && Number.isFinite(ast.literal))
        ? `v === ${JSON.stringify(ast.literal)}`
        : undefined
    default:
      return undefined
  }
}

export interface Property {
  readonly name: PropertyKey
  readonly optional: boolean
  readonly encode: Encode
  readonly check: string | undefined
}

/** The struct's encoder as a loop over its properties: the way when a function cannot be made from source. */
const structLoop = (properties: ReadonlyArray<Property>, values: Encode | undefined): Encode => {
  const declared = new Set(properties.map((property) => property.name))
  return (value) => {
    if (!isRecord(value)) return fail()
    const out: Record<PropertyKey, unknown> = {}
    for (const property of properties) {
      const has = Object.prototype.hasOwnProperty.call(value, property.name)
      if (!has && property.optional) continue
      out[property.name] = property.encode(value[property.name])
    }
    if (values !== undefined) {
      for (const key of Object.keys(value)) {
        const encoded = values(value[key])
        if (!declared.has(key)) out[key] = encoded
      }
    }
    return out
  }
}

/**
 * The struct's encoder written out, property by property, as the loop
 * would run: each property read and written by its name, a keyword or
 * literal checked in place, any other node called at a call site of its own.
 */
const structSource = (properties: ReadonlyArray<Property>, indexed: boolean): string => {
  const lines = [
    "return function encodeStruct(value) {",
    "  if (typeof value !== \"object\" || value === null || Array.isArray(value)) return fail()",
    "  const out = {}",
    "  let v"
  ]
  properties.forEach((property, i) => {
    const key = JSON.stringify(property.name)
    const set = property.check === undefined
      ? `out[${key}] = encoders[${i}](value[${key}])`
      : `v = value[${key}]; if (!(${property.check})) fail(); out[${key}] = v`
    lines.push(property.optional ? `  if (hasOwn.call(value, ${key})) { ${set} }` : `  ${set}`)
  })
  if (indexed) {
    lines.push(
      "  for (const key of Object.keys(value)) {",
      "    const encoded = values(value[key])",
      "    if (!declared.has(key)) out[key] = encoded",
      "  }"
    )
  }
  lines.push("  return out", "}")
  return lines.join("\n")
}

/**
 * A struct's encoder over its compiled properties (and the encoder of its
 * index signature's values, if it has one): written out from source, or the
 * loop where a name cannot be written in source (a symbol; `__proto__`,
 * which as a key would set the prototype) or no function can be made.
 */
export const struct = (properties: ReadonlyArray<Property>, values: Encode | undefined): Encode => {
  const loop = () => structLoop(properties, values)
  if (properties.some((property) => typeof property.name !== "string" || property.name === "__proto__")) return loop()
  return ownFunction<Encode>(
    ["fail", "hasOwn", "encoders", "values", "declared"],
    structSource(properties, values !== undefined),
    [fail, Object.prototype.hasOwnProperty, properties.map((property) => property.encode), values,
      new Set(properties.map((property) => property.name))],
    loop
  )
}
