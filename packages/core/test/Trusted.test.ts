/**
 * `Trusted.make` against the constructors it stands in for: for every schema
 * class of the domain model, a record made from the same values either way
 * has the same prototype, the same own properties in the same order and is
 * `Equal` to the other; with optional fields left out as well. A class
 * whose constructor adds a default, or a `_tag`, goes through it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Equal, Schema } from "effect"
import * as Model from "../src/model/index.js"
import * as Trusted from "../src/model/Trusted.js"

type AnyClass = new(values: any, options?: Schema.MakeOptions) => object

/** Every schema class the model exports. */
const classes = Object.entries(Model).flatMap(([module, exports]) =>
  Object.entries(exports as Record<string, unknown>).flatMap(([name, value]) =>
    typeof value === "function" && Schema.isSchema(value) && typeof (value as { fields?: unknown }).fields === "object" &&
      typeof (value as { identifier?: unknown }).identifier === "string" && value.ast._tag === "Transformation" &&
      // Errors are made by their constructors (each with its own stack), never from stored values.
      !((value as { prototype?: unknown }).prototype instanceof Error)
      ? [{ name: `${module}.${name}`, Class: value as unknown as AnyClass & { readonly fields: Schema.Struct.Fields } }]
      : []
  )
)

/** Own properties, in order, with their values. */
const own = (record: object) => Reflect.ownKeys(record).map((key) => [key, (record as Record<PropertyKey, unknown>)[key]])

describe("Trusted.make", () => {
  it("finds the model's classes", () => {
    expect(classes.map((c) => c.name)).toEqual(expect.arrayContaining(["Deployment.DeploymentRecord", "Deployment.Deployment", "Conversation.Message"]))
  })

  it("makes what each class's constructor makes from the same values, with every field and without the optional ones", () => {
    for (const { Class, name } of classes) {
      const keys = Object.keys(Class.fields)
      const optional = new Set(keys.filter((key) => {
        const field = Class.fields[key]
        return Schema.isPropertySignature(field) && field.ast._tag === "PropertySignatureDeclaration" && field.ast.isOptional
      }))
      for (const values of [
        Object.fromEntries(keys.map((key, i) => [key, `value ${i}`])),
        Object.fromEntries(keys.filter((key) => !optional.has(key)).map((key, i) => [key, `value ${i}`]))
      ]) {
        const made = Trusted.make(Class, values)
        const constructed = new Class(values, { disableValidation: true })
        expect(Object.getPrototypeOf(made), name).toBe(Object.getPrototypeOf(constructed))
        expect(own(made), name).toEqual(own(constructed))
        expect(Equal.equals(made, constructed), name).toBe(true)
        // The values are copied, as the constructor copies them.
        expect(made, name).not.toBe(values)
      }
    }
  })
})
