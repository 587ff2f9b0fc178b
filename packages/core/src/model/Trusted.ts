/**
 * Records made from values that were checked already: a row this storage
 * wrote (the schema checked it on its way in), a view of a checked record.
 *
 * `new Record(values, { disableValidation: true })` checks nothing, yet its
 * constructor still copies the values and looks through every field for a
 * default (about 2 µs for a record of twenty fields, the most of a list read
 * that makes a few records per row: docs/performance.md, "Records from
 * checked values"). For a class without a `_tag` field, what the
 * constructor makes is an object of the class's prototype with the values
 * as its own properties, in their order, then each defaulted field the
 * values leave undefined given its default, in the order of the fields:
 * that is what `make` makes, without the constructor (a message without
 * a trace id: 2 µs by the constructor, 0.12 µs here; docs/performance.md,
 * "A flow message measured whole"). A class with a `_tag` goes to its
 * constructor.
 * `test/Trusted.test.ts` holds every record made this way to what its
 * constructor makes.
 */
import { Schema } from "effect"

/** A schema class: built from its values, with the options of `Schema.Class` constructors. */
type RecordClass = new(values: any, options?: Schema.MakeOptions) => object

/** The default of a field, when it has one. */
const defaultOf = (field: unknown): (() => unknown) | undefined => {
  if (!Schema.isPropertySignature(field)) return undefined
  const ast = field.ast
  return ast._tag === "PropertySignatureDeclaration" ? ast.defaultValue : ast.to.defaultValue
}

/**
 * Per class (decided once): undefined when its constructor must make its
 * records, else its defaulted fields, in their order, with their defaults.
 */
const assignable = new WeakMap<RecordClass, ReadonlyArray<readonly [string, () => unknown]> | undefined>()

const defaultedOf = (Record: RecordClass): ReadonlyArray<readonly [string, () => unknown]> | undefined => {
  if (assignable.has(Record)) return assignable.get(Record)
  // A schema class names itself (`identifier`); a struct schema has fields too, but makes no instances of itself.
  const { fields, identifier } = Record as { readonly fields?: Schema.Struct.Fields; readonly identifier?: unknown }
  const defaulted = fields !== undefined && typeof identifier === "string" && !Object.prototype.hasOwnProperty.call(fields, "_tag")
    ? Object.keys(fields).flatMap((key) => {
      const makeDefault = defaultOf(fields[key])
      return makeDefault === undefined ? [] : [[key, makeDefault] as const]
    })
    : undefined
  assignable.set(Record, defaulted)
  return defaulted
}

/** A record of `Record` with `values`, as `new Record(values, { disableValidation: true })` makes it. */
export const make = <C extends RecordClass>(Record: C, values: ConstructorParameters<C>[0]): InstanceType<C> => {
  const defaulted = defaultedOf(Record)
  if (defaulted === undefined) return new Record(values, { disableValidation: true }) as InstanceType<C>
  const record = Object.assign(Object.create(Record.prototype), values)
  // The constructor gives a defaulted field its default where the values leave it undefined, field by field.
  for (const [key, makeDefault] of defaulted) if (record[key] === undefined) record[key] = makeDefault()
  return record
}
