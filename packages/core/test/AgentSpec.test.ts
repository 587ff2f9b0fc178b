import { describe, expect, it } from "@effect/vitest"
import { Agent, AgentSpec } from "@hosting/core"
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

  it.effect("protocol and endpoint: openai and a2a with an http(s) endpoint are known; anything else is warned about", () =>
    Effect.gen(function*() {
      const base = "name: helper\ndescription: d\n"
      expect(yield* codes(`${base}protocol: a2a\nendpoint: https://agent.example/.well-known/agent-card.json\nversion: 1.0.0\nskills: []\n`)).toEqual([])
      expect(yield* codes(`${base}protocol: OpenAI\nendpoint: http://10.0.0.1:9000\n`)).toEqual([])
      expect(yield* codes(`${base}protocol: grpc\n`)).toEqual(["invalid_protocol@protocol"])
      expect(yield* codes(`${base}protocol: 2\n`)).toEqual(["invalid_protocol@protocol"])
      expect(yield* codes(`${base}protocol: a2a\nendpoint: agent.example\n`)).toEqual(["invalid_endpoint@endpoint"])
      expect(yield* codes(`${base}endpoint: ftp://agent.example\n`)).toEqual(["invalid_endpoint@endpoint"])
    }))

  it("protocolOf: the protocol a spec names when it is not the default, trimmed and in lower case", () => {
    expect(AgentSpec.protocolOf({})).toBeUndefined()
    expect(AgentSpec.protocolOf({ protocol: " openai " })).toBeUndefined()
    expect(AgentSpec.protocolOf({ protocol: "A2A" })).toBe("a2a")
    expect(AgentSpec.protocolOf({ protocol: "grpc" })).toBe("grpc")
  })

  it.effect("an env entry { secret: NAME } is a reference to a secret, not a warning; a malformed one is warned about", () =>
    Effect.gen(function*() {
      const yaml = "name: helper\ndescription: d\nenv:\n  API_KEY: { secret: OPENAI_KEY }\n  MODE: fast\n" +
        "  LOWER: { secret: openai }\n  EXTRA: { secret: A, other: 1 }\n"
      expect(yield* codes(yaml)).toEqual(["invalid_secret_ref@env.LOWER", "invalid_secret_ref@env.EXTRA"])
      const spec = yield* AgentSpec.parse(yaml)
      expect(Agent.secretRefsOf(spec)).toEqual({ API_KEY: "OPENAI_KEY" })
      expect(Agent.envOf(spec)).toEqual({ MODE: "fast" })
      // Outside the agent's account a reference is hidden like any value: names only.
      expect(Agent.withEnvHidden(spec)["env"]).toEqual({ API_KEY: "(hidden)", MODE: "(hidden)", LOWER: "(hidden)", EXTRA: "(hidden)" })
    }))

  it("env values that look like credentials are warned about: key formats under any name, random strings under secret names", () => {
    const credentials: ReadonlyArray<readonly [string, string]> = [
      ["OPENAI_API_KEY", "sk-proj-Tq3vX9mR2bL7wK4nP8sD1fG6hJ0aZ5cY"],
      ["LLM", "sk-ant-api03-Tq3vX9mR2bL7wK4nP8sD1f"],
      ["GH", "ghp_Tq3vX9mR2bL7wK4nP8sD1fG6hJ0aZ5cYxxxx"],
      ["SLACK", "xoxb-123456789012-abcdefghij"],
      ["AWS_ID", "AKIAIOSFODNN7EXAMPLE"],
      ["STRIPE", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"],
      ["DB_PASSWORD", "c2VjcmV0LXBhc3N3b3JkMTIz"],
      ["WEBHOOK_SECRET", "9f86d081884c7d659a2feaa0c55ad015"],
      ["SERVICE_TOKEN", "a1b2c3d4e5f6a7b8c9d0e1f2"]
    ]
    for (const [name, value] of credentials) expect(AgentSpec.looksLikeCredential(name, value), name).toBe(true)
    const plain: ReadonlyArray<readonly [string, string]> = [
      ["MODE", "fast"],
      ["MAX_TOKENS", "4096"],
      ["OPENAI_API_KEY", "${OPENAI_API_KEY}"],
      ["API_URL", "https://api.example.com/v1"],
      ["CACHE_KEY", "answers"],
      ["BUILD", "a1b2c3d4e5f6a7b8c9d0e1f2"],
      ["TASK", "sk-short"]
    ]
    for (const [name, value] of plain) expect(AgentSpec.looksLikeCredential(name, value), name).toBe(false)
  })

  it.effect("a credential in env gives the env_credential warning at its path, without repeating the value", () =>
    Effect.gen(function*() {
      const spec = yield* AgentSpec.parse("name: helper\ndescription: d\nenv:\n  OPENAI_API_KEY: sk-proj-Tq3vX9mR2bL7wK4nP8sD1f\n  MODE: fast\n")
      const warnings = AgentSpec.validate(spec, agent)
      expect(warnings.map((w) => `${w.code}@${w.path}`)).toEqual(["env_credential@env.OPENAI_API_KEY"])
      expect(warnings[0]!.message).toContain("Use a secret instead")
      expect(warnings[0]!.message).not.toContain("sk-proj")
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
