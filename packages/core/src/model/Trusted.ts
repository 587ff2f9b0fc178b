/**
 * Records made from values that were checked already: a row this storage
 * wrote (the schema checked it on its way in), a view of a checked record.
 *
 * `new Record(values, { disableValidation: true })` checks nothing, yet its
 * constructor still copies the values and looks through every field for a
 * default (about 2 µs for a record of twenty fields, the most of a list read
 * that makes a few records per row: docs/performance.md, "Records from
 * checked values"). For a class whose fields have no default and no `_tag`,
 * what the constructor makes is an object of the class's prototype with the
 * values as its own properties, in their order: that is what `make` makes,
 * without the constructor. Any other class is made by its constructor.
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

/** Per class: whether its instances are its prototype with the values assigned (decided once). */
const assignable = new WeakMap<RecordClass, boolean>()

const isAssignable = (Record: RecordClass): boolean => {
  let plain = assignable.get(Record)
  if (plain === undefined) {
    // A schema class names itself (`identifier`); a struct schema has fields too, but makes no instances of itself.
    const { fields, identifier } = Record as { readonly fields?: Schema.Struct.Fields; readonly identifier?: unknown }
    plain = fields !== undefined && typeof identifier === "string" && !Object.prototype.hasOwnProperty.call(fields, "_tag") &&
      !Object.values(fields).some(hasDefault)
    assignable.set(Record, plain)
  }
  return plain
}

/** A record of `Record` with `values`, as `new Record(values, { disableValidation: true })` makes it. */
export const make = <C extends RecordClass>(Record: C, values: ConstructorParameters<C>[0]): InstanceType<C> =>
  (isAssignable(Record)
    ? Object.assign(Object.create(Record.prototype), values)
    : new Record(values, { disableValidation: true })) as InstanceType<C>
