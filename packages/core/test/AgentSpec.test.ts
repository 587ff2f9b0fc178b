import { describe, expect, it } from "@effect/vitest"
import { AgentSpec } from "@hosting/core"
import { Effect } from "effect"

const agent = { name: "helper", registry: "https://ghcr.io/acme/" }
const codes = (yaml: string) =>
  Effect.map(AgentSpec.parse(yaml), (spec) => AgentSpec.validate(spec, agent).map((w) => `${w.code}@${w.path}`))

describe("AgentSpec", () => {
  it.effect("a complete spec in the agent's registry has no warnings", () =>
    Effect.gen(function*() {
      expect(yield* codes("name: helper\ndescription: d\nimage: ghcr.io/acme/helper:1\nport: 8080\nenv:\n  A: 'x'\n")).toEqual([])
    }))

  it.effect("each documented check produces its warning code and path", () =>
    Effect.gen(function*() {
      expect(yield* codes("{}")).toEqual(["missing_name@name", "missing_description@description"])
      expect(yield* codes("name: other\ndescription: d\n")).toEqual(["name_mismatch@name"])
      expect(yield* codes("name: 3\ndescription: [a]\n")).toEqual(["invalid_type@name", "invalid_type@description"])
      expect(yield* codes("name: helper\ndescription: d\nextra: 1\n")).toEqual(["unknown_key@extra"])
      expect(yield* codes("name: helper\ndescription: d\nimage: docker.io/acme/helper\n")).toEqual(["image_registry_mismatch@image"])
      expect(yield* codes("name: helper\ndescription: d\nport: 0\n")).toEqual(["invalid_port@port"])
      expect(yield* codes("name: helper\ndescription: d\nenv:\n  N: 1\n")).toEqual(["invalid_env_value@env.N"])
      expect(yield* codes("name: helper\ndescription: d\nenv: [1]\n")).toEqual(["invalid_type@env"])
    }))

  it.effect("text that is not a YAML mapping is refused with a reason", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(AgentSpec.parse("name: [unclosed"))
      expect(error._tag).toBe("SpecInvalid")
      expect(error.message).toMatch(/YAML error \(line \d+, column \d+\)/)
      expect((yield* Effect.flip(AgentSpec.parse("")))._tag).toBe("SpecInvalid")
      expect((yield* Effect.flip(AgentSpec.parse("x".repeat(AgentSpec.maxSpecLength + 1))))._tag).toBe("SpecInvalid")
    }))

  it.effect("alias bombs are refused rather than expanded", () =>
    Effect.gen(function*() {
      const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
      for (let i = 1; i < 12; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(", ")}]`)
      const error = yield* Effect.flip(AgentSpec.parse(lines.join("\n")))
      expect(error._tag).toBe("SpecInvalid")
    }))
})
