/**
 * Decoders compiled once from a schema's AST, for the input of the compiled
 * app's requests (path, query, headers, payload): a function per node that
 * builds the decoded value directly, where `ParseResult`'s decoder returns
 * an `Either` per node, merges options and wraps every step to describe a
 * failure. A request's path of two names took about 6 µs that way on this
 * machine class (docs/performance.md, "Requests decoded by compiled
 * decoders").
 *
 * The schema's own decoder stays the reference, and the way out:
 *
 * - A schema with a node this module does not know, or with parse options
 *   of its own, gets no compiled decoder: `compile` answers undefined.
 * - An input the schema refuses makes the compiled decoder throw
 *   `Mismatch` (encoderParts.ts); a step that needs effects, or anything
 *   else it cannot decide, throws `Undecided`. Either way the caller
 *   decodes that input with the schema, which answers the same value, or
 *   its own `ParseError`.
 *
 * A union tries its members in the schema's order and takes the first that
 * decodes, as the schema does when no member is told apart by a literal
 * property (a union that is stays with the schema). A member that refuses
 * goes on to the next; one that cannot decide leaves the whole input to the
 * schema.
 *
 * The parity test (`test/CompiledDecoder.test.ts`) decodes generated inputs
 * of every request schema of the API both ways and compares them.
 */
import { Either, Option, ParseResult, type Schema, SchemaAST } from "effect"
import {
  type Encode as Decode,
  fail,
  inlineCheck,
  keyword,
  leaf,
  Mismatch,
  ownFunction,
  type Property,
  struct,
  withReference
} from "./encoderParts.js"

export { type Encode as Decode, Mismatch } from "./encoderParts.js"

/** Thrown when the compiled decoder cannot tell what the schema would answer: the schema decides. */
export class Undecided extends Error {
  constructor() {
    super("the compiled decoder leaves this input to the schema")
  }
}

const undecided = new Undecided()

const leave = (): never => {
  throw undecided
}

const options = SchemaAST.defaultParseOption

/** The value of a step's result: a `Right` is taken, a `Left` refused; an effect (or anything else) is left to the schema. */
const valueOf = (result: unknown): unknown => {
  if (typeof result === "object" && result !== null) {
    const tag = (result as { readonly _tag?: unknown })._tag
    if (tag === "Right" && Either.isEither(result)) return (result as Either.Right<unknown, unknown>).right
    if (tag === "Left" && Either.isEither(result)) return fail()
  }
  return leave()
}

/** Whether a node has options of its own for the schema's decoder, or a fallback: those are left to the schema. */
const hasOwnOptions = (ast: SchemaAST.AST) =>
  Option.isSome(SchemaAST.getParseOptionsAnnotation(ast)) || Option.isSome(SchemaAST.getDecodingFallbackAnnotation(ast))

/**
 * Whether the schema's decoder looks first at a literal property of the
 * member to pick union members (ParseResult's search of a union): such a
 * union is left to the schema, which may try its members in another order.
 */
const hasLiteralKey = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Declaration":
      return Option.isSome(SchemaAST.getSurrogateAnnotation(ast))
    case "TypeLiteral":
      return ast.propertySignatures.some((signature) =>
        !signature.isOptional && SchemaAST.isLiteral(SchemaAST.encodedAST(signature.type))
      )
    case "TupleType":
      return ast.elements.some((element) => !element.isOptional && SchemaAST.isLiteral(SchemaAST.encodedAST(element.type)))
    case "Refinement":
      return hasLiteralKey(ast.from)
    case "Suspend":
      return true
    case "Transformation":
      return hasLiteralKey(ast.from)
    default:
      return false
  }
}

/** A transformation's decode step, when this module knows its kind. */
const transformDecode = (ast: SchemaAST.Transformation): Decode | undefined => {
  const transformation = ast.transformation
  switch (transformation._tag) {
    case "ComposeTransformation":
      return (value) => value
    case "FinalTransformation":
      return (value) => valueOf(transformation.decode(value, options, ast, value))
    case "TypeLiteralTransformation": {
      // Each step moves its key on the object the `from` struct made (a fresh one), as the schema's decoder does.
      if (ast.from._tag !== "TypeLiteral" || ast.from.propertySignatures.length === 0) return undefined
      const steps = transformation.propertySignatureTransformations
      return (value) => {
        const moved = value as Record<PropertyKey, unknown>
        for (const step of steps) {
          const next = step.decode(Object.prototype.hasOwnProperty.call(moved, step.from) ? Option.some(moved[step.from]) : Option.none())
          delete moved[step.from]
          if (Option.isSome(next)) moved[step.to] = next.value
        }
        return moved
      }
    }
  }
}

/** A union's members tried in order: the first that decodes; one that refuses passes to the next. */
const union = (members: ReadonlyArray<Decode>): Decode => (value) => {
  for (const member of members) {
    try {
      return member(value)
    } catch (error) {
      if (!(error instanceof Mismatch)) throw error
    }
  }
  return fail()
}

/** An array of exactly the elements' types, then any number of the rest's: each decoded in place of its own. */
const tuple = (elements: ReadonlyArray<Decode>, rest: Decode | undefined): Decode => (value) => {
  if (!Array.isArray(value) || value.length < elements.length || (rest === undefined && value.length > elements.length)) {
    return fail()
  }
  const out = new Array(value.length)
  for (let i = 0; i < value.length; i++) out[i] = i < elements.length ? elements[i]!(value[i]) : rest!(value[i])
  return out
}

const makeCompiler = () => {
  const memo = new Map<SchemaAST.AST, Decode | undefined>()
  const go = (ast: SchemaAST.AST): Decode | undefined => {
    if (memo.has(ast)) return memo.get(ast)
    const decode = hasOwnOptions(ast) ? undefined : node(ast)
    memo.set(ast, decode)
    return decode
  }

  const typeLiteral = (ast: SchemaAST.TypeLiteral): Decode | undefined => {
    if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
      return leaf((value) => value !== null && value !== undefined)
    }
    const properties: Array<Property> = []
    for (const signature of ast.propertySignatures) {
      const decode = go(signature.type)
      if (decode === undefined) return undefined
      properties.push({ name: signature.name, optional: signature.isOptional, encode: decode, check: inlineCheck(signature.type) })
    }
    if (ast.indexSignatures.length > 1) return undefined
    const index = ast.indexSignatures[0]
    if (index !== undefined && index.parameter._tag !== "StringKeyword") return undefined
    const values = index === undefined ? undefined : go(index.type)
    if (index !== undefined && values === undefined) return undefined
    // A struct decodes as it encodes: each declared property read by name, each key of an index signature decoded.
    return struct(properties, values)
  }

  const node = (ast: SchemaAST.AST): Decode | undefined => {
    const simple = keyword(ast)
    if (simple !== undefined) return simple
    switch (ast._tag) {
      case "VoidKeyword":
        return (value) => value
      case "Refinement": {
        const from = go(ast.from)
        if (from === undefined) return undefined
        return ownFunction(
          ["filter", "options", "ast", "isSome", "from", "fail"],
          "return (value) => { const decoded = from(value); return isSome(filter(decoded, options, ast)) ? fail() : decoded }",
          [ast.filter, options, ast, Option.isSome, from, fail],
          () => (value) => {
            const decoded = from(value)
            return Option.isSome(ast.filter(decoded, options, ast)) ? fail() : decoded
          }
        )
      }
      case "Transformation": {
        const from = go(ast.from)
        const step = transformDecode(ast)
        const to = go(ast.to)
        if (from === undefined || step === undefined || to === undefined) return undefined
        return ownFunction(["from", "step", "to"], "return (value) => to(step(from(value)))", [from, step, to], () => (value) =>
          to(step(from(value))))
      }
      case "Declaration": {
        const decode = ast.decodeUnknown(...ast.typeParameters)
        return (value) => valueOf(decode(value, options, ast))
      }
      case "TypeLiteral":
        return typeLiteral(ast)
      case "TupleType": {
        if (ast.elements.some((element) => element.isOptional) || ast.rest.length > 1) return undefined
        const elements: Array<Decode> = []
        for (const element of ast.elements) {
          const decode = go(element.type)
          if (decode === undefined) return undefined
          elements.push(decode)
        }
        const rest = ast.rest.length === 0 ? undefined : go(ast.rest[0]!.type)
        if (ast.rest.length > 0 && rest === undefined) return undefined
        return tuple(elements, rest)
      }
      case "Union": {
        if (ast.types.every((member) => member._tag === "Literal")) {
          const literals = new Set(ast.types.map((member) => (member as SchemaAST.Literal).literal))
          return leaf((value) => literals.has(value as SchemaAST.LiteralValue))
        }
        if (ast.types.some(hasLiteralKey)) return undefined
        const members: Array<Decode> = []
        for (const member of ast.types) {
          const decode = go(member)
          if (decode === undefined) return undefined
          members.push(decode)
        }
        return union(members)
      }
      default:
        return undefined
    }
  }
  return go
}

/** The compiled decoder of a schema, or undefined when the schema has a node this module leaves to it. */
export const compile = (schema: Schema.Schema.Any): Decode | undefined => makeCompiler()(schema.ast)

/**
 * Decodes with the compiled decoder when there is one and it decodes the
 * input, else with the schema's synchronous decoder (`Either`).
 */
export const decoderOf = (schema: Schema.Schema.Any) =>
  withReference(compile(schema), ParseResult.decodeUnknownEither(schema as Schema.Schema<any, any, never>))
