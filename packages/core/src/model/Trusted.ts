/**
 * Records made from values that were checked already: a row this storage
 * wrote (the schema checked it on its way in), a view of a checked record.
 *
 * `new Record(values, { disableValidation: true })` checks nothing, yet its
 * constructor still copies the values and looks through every field for a
 * default (about 2 µs for a record of twenty fields, the most of a list read
 * that makes a few records per row: docs/performance.md, "Records from
 * checked values"). For a class without a `_tag` field, given a value for
 * each of its fields that have a default, what the constructor makes is an
 * object of the class's prototype with the values as its own properties, in
 * their order: that is what `make` makes, without the constructor. Any
 * other class, or values without a defaulted field, go to the constructor,
 * which adds the default.
 * `test/model/Trusted.test.ts` holds every record made this way to what its
 * constructor makes.
 */
import { Schema } from "effect"

/** A schema class: built from its values, with the options of `Schema.Class` constructors. */
type RecordClass = new(values: any, options?: Schema.MakeOptions) => object

const hasDefault = (field: unknown): boolean => {
  if (!Schema.isPropertySignature(field)) return false
  const ast = field.ast
  return (ast._tag === "PropertySignatureDeclaration" ? ast.defaultValue : ast.to.defaultValue) !== undefined
}

/**
 * Per class (decided once): undefined when its constructor must make its
 * records, else the fields whose default the constructor would add when
 * the values lack them.
 */
const assignable = new WeakMap<RecordClass, ReadonlyArray<string> | undefined>()

const defaultedOf = (Record: RecordClass): ReadonlyArray<string> | undefined => {
  if (assignable.has(Record)) return assignable.get(Record)
  // A schema class names itself (`identifier`); a struct schema has fields too, but makes no instances of itself.
  const { fields, identifier } = Record as { readonly fields?: Schema.Struct.Fields; readonly identifier?: unknown }
  const defaulted = fields !== undefined && typeof identifier === "string" && !Object.prototype.hasOwnProperty.call(fields, "_tag")
    ? Object.keys(fields).filter((key) => hasDefault(fields[key]))
    : undefined
  assignable.set(Record, defaulted)
  return defaulted
}

/** Whether the values give each defaulted field a value (the constructor adds a default where one is undefined). */
const givesEach = (values: Record<string, unknown>, defaulted: ReadonlyArray<string>) => {
  for (const key of defaulted) if (values[key] === undefined) return false
  return true
}

/** A record of `Record` with `values`, as `new Record(values, { disableValidation: true })` makes it. */
export const make = <C extends RecordClass>(Record: C, values: ConstructorParameters<C>[0]): InstanceType<C> => {
  const defaulted = defaultedOf(Record)
  return (defaulted !== undefined && (defaulted.length === 0 || givesEach(values, defaulted))
    ? Object.assign(Object.create(Record.prototype), values)
    : new Record(values, { disableValidation: true })) as InstanceType<C>
}
