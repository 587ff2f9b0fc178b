/**
 * Encoders compiled once from a schema's AST, for the answers of the
 * compiled app: a function per node that builds the encoded value directly,
 * where `ParseResult`'s encoder builds parsers that return an `Either` per
 * node, look up unions through a search tree and collect issues. On the
 * answers of a list route (ten conversations) this is about six times
 * faster.
 *
 * The schema's own encoder stays the reference, and the way out:
 *
 * - A schema with a node this module does not know (a tuple with optional
 *   elements, a record keyed by a refined string, ...) gets no compiled
 *   encoder: `compile` answers
 *   undefined and the caller encodes with the schema.
 * - A value the compiled encoder cannot encode exactly as the schema would
 *   (a leaf of the wrong type, a refinement that refuses it, a
 *   transformation that fails or needs effects, no union member that takes
 *   it) makes it throw `Mismatch`; the caller then encodes that value with
 *   the schema, which answers the same value, or the same `ParseError`.
 *
 * The parity test
 * (`test/CompiledEncoder.test.ts`) encodes generated values of every
 * success schema of the API both ways and compares them.
 */
import { Either, Option, ParseResult, Schema, SchemaAST } from "effect"
import { type Encode, fail, inlineCheck, isRecord, keyword, leaf, ownFunction, type Property, struct, withReference } from "./encoderParts.js"

export { type Encode, Mismatch } from "./encoderParts.js"



/**
 * The value of a synchronous parse result, else a mismatch. A result is an
 * `Either` (an `Effect` when the step needs effects, which the schema's
 * encoder runs, or an `Exit`): its tag tells it, without `Either.isEither`'s
 * slower look for the type's symbol.
 */
const rightOf = (result: unknown): unknown =>
  typeof result === "object" && result !== null && (result as { readonly _tag?: unknown })._tag === "Right"
    ? (result as Either.Right<unknown, unknown>).right
    : fail()

/** The type sides of dates: immutable values, whose encoding can be kept with them. */
const dateTypes: ReadonlySet<SchemaAST.AST> = new Set([Schema.DateTimeUtcFromSelf.ast, Schema.DateTimeZonedFromSelf.ast])


/** A transformation's encode step, when it answers synchronously. */
const transformEncode = (ast: SchemaAST.Transformation): Encode | undefined => {
  const transformation = ast.transformation
  switch (transformation._tag) {
    case "ComposeTransformation":
      return (value) => value
    case "FinalTransformation": {
      const options = {}
      return (value) => rightOf(transformation.encode(value, options, ast, value))
    }
    case "TypeLiteralTransformation": {
      // As the schema's encoder does: each renamed or defaulted key of the type side moved to its encoded key.
      const steps = transformation.propertySignatureTransformations
      // The type side's encoder made a fresh object (a struct's does), unless the type side is taken as it is.
      const fresh = ast.to._tag === "TypeLiteral" && (ast.to.propertySignatures.length > 0 || ast.to.indexSignatures.length > 0)
      const moved = new Set<PropertyKey>(steps.map((step) => step.to))
      // Each moved key taken out and set again, as the schema's encoder does (`delete`, then set): it comes last.
      // Built as a new object instead: an object that lost a key is slower to read, and to write as JSON.
      // A step whose encoded key another step moves is left to the sequential way.
      const sequential = steps.some((step) => step.from !== step.to && moved.has(step.from))
      if (fresh && !sequential && ast.from._tag === "TypeLiteral" && ast.from.indexSignatures.length === 0) {
        // The encoded side's struct reads its declared keys by name and builds the answer in its own order, so the
        // steps can be taken on the type side's fresh object as it is: no key copied, no object made. A renamed key's
        // old name may stay, as no step moves onto it and the encoded side does not declare it; a key a step leaves
        // out is deleted, as the struct would take it were it there.
        return (value) => {
          if (!isRecord(value)) return fail()
          for (const step of steps) {
            const has = Object.prototype.hasOwnProperty.call(value, step.to)
            const next = step.encode(has ? Option.some(value[step.to]) : Option.none())
            if (Option.isSome(next)) value[step.from] = next.value
            else if (has) delete value[step.to]
          }
          return value
        }
      }
      return (value) => {
        if (!isRecord(value)) return fail()
        const source: Record<PropertyKey, unknown> = fresh ? value : { ...value }
        if (sequential) {
          for (const step of steps) {
            const given = Object.prototype.hasOwnProperty.call(source, step.to) ? Option.some(source[step.to]) : Option.none()
            const next = step.encode(given)
            delete source[step.to]
            if (Option.isSome(next)) source[step.from] = next.value
          }
          return source
        }
        const out: Record<PropertyKey, unknown> = {}
        for (const key of Reflect.ownKeys(source)) if (!moved.has(key)) out[key] = source[key]
        for (const step of steps) {
          const next = step.encode(
            Object.prototype.hasOwnProperty.call(source, step.to) ? Option.some(source[step.to]) : Option.none()
          )
          if (Option.isSome(next)) out[step.from] = next.value
        }
        return out
      }
    }
  }
}

interface Compiler {
  readonly go: (ast: SchemaAST.AST) => Encode | undefined
}

const typeLiteral = (ast: SchemaAST.TypeLiteral, compiler: Compiler): Encode | undefined => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return leaf((value) => value !== null && value !== undefined)
  }
  const properties: Array<Property> = []
  for (const signature of ast.propertySignatures) {
    const encode = compiler.go(signature.type)
    if (encode === undefined) return undefined
    properties.push({ name: signature.name, optional: signature.isOptional, encode, check: inlineCheck(signature.type) })
  }
  if (ast.indexSignatures.length > 1) return undefined
  const index = ast.indexSignatures[0]
  let values: Encode | undefined
  if (index !== undefined) {
    // Only string keys without refinements: the keys of such a record are every own enumerable string key.
    if (index.parameter._tag !== "StringKeyword") return undefined
    values = compiler.go(index.type)
    if (values === undefined) return undefined
  }
  return struct(properties, values)
}

const tuple = (ast: SchemaAST.TupleType, compiler: Compiler): Encode | undefined => {
  if (ast.elements.some((element) => element.isOptional) || ast.rest.length > 1) return undefined
  const elements: Array<Encode> = []
  for (const element of ast.elements) {
    const encode = compiler.go(element.type)
    if (encode === undefined) return undefined
    elements.push(encode)
  }
  const restType = ast.rest[0]
  const rest = restType === undefined ? undefined : compiler.go(restType.type)
  if (restType !== undefined && rest === undefined) return undefined
  const general: Encode = (value) => {
    if (!Array.isArray(value)) return fail()
    if (value.length < elements.length || (rest === undefined && value.length > elements.length)) return fail()
    const out = new Array(value.length)
    for (let i = 0; i < value.length; i++) out[i] = i < elements.length ? elements[i]!(value[i]) : rest!(value[i])
    return out
  }
  if (elements.length > 0 || rest === undefined) return general
  // An array of one type, the most common: the items' encoder called at a site of its own.
  return ownFunction(
    ["rest", "fail"],
    "return function encodeArray(value) {\n  if (!Array.isArray(value)) return fail()\n  const out = new Array(value.length)\n" +
      "  for (let i = 0; i < value.length; i++) out[i] = rest(value[i])\n  return out\n}",
    [rest, fail],
    () => general
  )
}

/** The options the schema's `is` decodes with. */
const isOptions: SchemaAST.ParseOptions = { exact: true }

/**
 * Whether a value has a type: a direct check for the simple types (a
 * keyword, a literal, a refinement of one), the declaration's own check for
 * a declaration (a date's), else the schema's own `is`. Union members are
 * told apart with it for each value encoded.
 */
const guardOf = (ast: SchemaAST.AST): (value: unknown) => boolean => {
  switch (ast._tag) {
    case "StringKeyword":
      return (value) => typeof value === "string"
    case "NumberKeyword":
      return (value) => typeof value === "number"
    case "BooleanKeyword":
      return (value) => typeof value === "boolean"
    case "Literal":
      return (value) => value === ast.literal
    case "Refinement": {
      const from = guardOf(ast.from)
      return (value) => from(value) && Option.isNone(ast.filter(value, SchemaAST.defaultParseOption, ast))
    }
    case "Declaration": {
      // As the schema's `is` checks it, without its steps around the declaration's own answer.
      const is = Schema.is(Schema.make(ast))
      if (Option.isSome(SchemaAST.getParseOptionsAnnotation(ast))) return is
      const check = ast.decodeUnknown(...ast.typeParameters)
      return (value) => {
        const result = check(value, isOptions, ast) as unknown
        return Either.isEither(result) ? Either.isRight(result) : is(value)
      }
    }
    default:
      return Schema.is(Schema.make(ast))
  }
}

const union = (ast: SchemaAST.Union, compiler: Compiler): Encode | undefined => {
  // Literals only: a set lookup.
  if (ast.types.every((member) => member._tag === "Literal")) {
    const literals = new Set(ast.types.map((member) => (member as SchemaAST.Literal).literal))
    return leaf((value) => literals.has(value as SchemaAST.LiteralValue))
  }
  // Otherwise the first member whose type the value has, as the schema's encoder takes the first that encodes it.
  const members: Array<{ readonly is: (value: unknown) => boolean; readonly encode: Encode }> = []
  for (const member of ast.types) {
    const encode = compiler.go(member)
    if (encode === undefined) return undefined
    members.push({ is: guardOf(SchemaAST.typeAST(member)), encode })
  }
  // Written out member by member, each test and encoder called at a site of its own.
  const body = members.map((_, i) => `  if (is[${i}](value)) return encode[${i}](value)`).join("\n")
  return ownFunction(
    ["is", "encode", "fail"],
    `return function encodeUnion(value) {\n${body}\n  return fail()\n}`,
    [members.map((member) => member.is), members.map((member) => member.encode), fail],
    () => (value) => {
      for (const member of members) if (member.is(value)) return member.encode(value)
      return fail()
    }
  )
}

/** Compiles every node once; a suspended schema (a recursive one) is compiled the first time it is met. */
const makeCompiler = (): Compiler => {
  const memo = new Map<SchemaAST.AST, Encode | undefined>()
  const go = (ast: SchemaAST.AST): Encode | undefined => {
    if (memo.has(ast)) return memo.get(ast)
    const encode = node(ast)
    memo.set(ast, encode)
    return encode
  }
  const compiler: Compiler = { go }
  const node = (ast: SchemaAST.AST): Encode | undefined => {
    const simple = keyword(ast)
    if (simple !== undefined) return simple
    switch (ast._tag) {
      case "VoidKeyword":
        return leaf((value) => value === undefined)
      case "Enums": {
        const values = new Set(ast.enums.map(([, value]) => value))
        return leaf((value) => values.has(value as string | number))
      }
      case "TemplateLiteral":
        return leaf(Schema.is(Schema.make(ast)))
      case "Refinement": {
        const from = go(ast.from)
        if (from === undefined) return undefined
        const options = {}
        return ownFunction(
          ["filter", "options", "ast", "isSome", "from", "fail"],
          "return (value) => isSome(filter(value, options, ast)) ? fail() : from(value)",
          [ast.filter, options, ast, Option.isSome, from, fail],
          () => (value) => (Option.isSome(ast.filter(value, options, ast)) ? fail() : from(value))
        )
      }
      case "Transformation": {
        const to = go(ast.to)
        const step = transformEncode(ast)
        const from = go(ast.from)
        if (to === undefined || step === undefined || from === undefined) return undefined
        if (dateTypes.has(ast.to)) {
          // A date's encoding (its ISO text) kept with the date: a store hands out one object for the same stored
          // time, so the same date is formatted once, not on every answer. Only dates the type side took are kept.
          const encoded = new WeakMap<object, unknown>()
          return (value) => {
            let result = encoded.get(value as object)
            if (result === undefined) encoded.set(value as object, result = from(step(to(value))))
            return result
          }
        }
        return ownFunction(["from", "step", "to"], "return (value) => from(step(to(value)))", [from, step, to], () => (value) =>
          from(step(to(value))))
      }
      case "TypeLiteral":
        return typeLiteral(ast, compiler)
      case "TupleType":
        return tuple(ast, compiler)
      case "Union":
        return union(ast, compiler)
      case "Suspend": {
        let inner: Encode | undefined
        return (value) => {
          inner ??= go(ast.f()) ?? fail
          return inner(value)
        }
      }
      case "Declaration": {
        // The declaration's own encoder (a class's instance check, a date's type check), as the schema's encoder calls it.
        const encode = ast.encodeUnknown(...ast.typeParameters)
        return (value) => {
          const result = encode(value, SchemaAST.defaultParseOption, ast) as unknown
          return rightOf(result)
        }
      }
      default:
        return undefined
    }
  }
  return compiler
}

/** The compiled encoder of a schema, or undefined when the schema has a node this module leaves to it. */
export const compile = (schema: Schema.Schema.Any): Encode | undefined => makeCompiler().go(schema.ast)

/**
 * Encodes with the compiled encoder when there is one and it takes the
 * value, else with the schema's synchronous encoder (`Either`).
 */
export const encoderOf = (schema: Schema.Schema.Any) =>
  withReference(compile(schema), ParseResult.encodeUnknownEither(schema as Schema.Schema<any, any, never>))
