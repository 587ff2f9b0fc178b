/**
 * `Trusted.make` against the constructors it stands in for: for every schema
 * class of the domain model, a record made from the same values either way
 * has the same prototype, the same own properties in the same order and is
 * `Equal` to the other; with optional fields left out as well, and with
 * defaulted fields left out or undefined (the constructor adds their
 * default). A class with a `_tag` goes through its constructor.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Equal, Schema } from "effect"
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
    // Message has a defaulted field (trace_id): the cases without it and with it undefined are not empty.
    expect(Object.keys(classes.find((c) => c.name === "Conversation.Message")!.Class.fields)).toContain("trace_id")
  })

  it("makes what each class's constructor makes from the same values: every field, no optional one, no defaulted one", () => {
    for (const { Class, name } of classes) {
      const keys = Object.keys(Class.fields)
      const optional = new Set(keys.filter((key) => {
        const field = Class.fields[key]
        return Schema.isPropertySignature(field) && field.ast._tag === "PropertySignatureDeclaration" && field.ast.isOptional
      }))
      const defaulted = new Set(keys.filter((key) => {
        const field = Class.fields[key]
        return Schema.isPropertySignature(field) && field.ast._tag === "PropertySignatureTransformation" &&
          field.ast.to.defaultValue !== undefined
      }))
      for (const values of [
        Object.fromEntries(keys.map((key, i) => [key, `value ${i}`])),
        Object.fromEntries(keys.filter((key) => !optional.has(key)).map((key, i) => [key, `value ${i}`])),
        Object.fromEntries(keys.filter((key) => !defaulted.has(key)).map((key, i) => [key, `value ${i}`])),
        Object.fromEntries(keys.map((key, i) => [key, defaulted.has(key) ? undefined : `value ${i}`]))
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

  it("gives a left-out default itself, without the constructor; a class with a `_tag` goes through its constructor", () => {
    let constructed = 0
    const counted = <C extends AnyClass>(Class: C): C =>
      new Proxy(Class, {
        construct: (target, args, newTarget) => {
          constructed++
          return Reflect.construct(target, args, newTarget)
        }
      })
    // A user's message has no trace: its trace_id is the default, null.
    const message = Trusted.make(counted(Model.Conversation.Message), {
      message_id: Model.Conversation.MessageId.make("msg-1"),
      role: "user",
      content: "hi",
      attachments: [],
      timestamp: DateTime.unsafeMake(0),
      status: "complete"
    })
    expect(constructed).toBe(0)
    expect(message).toBeInstanceOf(Model.Conversation.Message)
    expect(message.trace_id).toBeNull()
    class Tagged extends Schema.TaggedClass<Tagged>()("Tagged", { n: Schema.Number }) {}
    expect(Trusted.make(counted(Tagged), { n: 1 })).toEqual(new Tagged({ n: 1 }))
    expect(constructed).toBe(1)
  })
})
