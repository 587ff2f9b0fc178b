/**
 * The GenAI facts of spans (GenAi.ts) and the input and output of exported
 * traces (Otlp.ts): the GenAI semantic conventions, their older names and
 * OpenInference's.
 */
import { describe, expect, it } from "@effect/vitest"
import { GenAi, Otlp } from "@hosting/core"

const node = (attributes: Record<string, string>, children: ReadonlyArray<GenAi.Node> = []): GenAi.Node => ({
  gen_ai: GenAi.genAiOf(attributes),
  children
})

describe("GenAI semantic conventions", () => {
  it("reads operation, model, tokens, input and output; older names and OpenInference's as fallbacks; null when none", () => {
    expect(GenAi.genAiOf({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": "7" }))
      .toEqual({ operation: "chat", model: "m", input_tokens: 7, output_tokens: null, input: null, output: null })
    expect(GenAi.genAiOf({
      "gen_ai.response.model": "r",
      "gen_ai.usage.prompt_tokens": "1",
      "gen_ai.usage.completion_tokens": "2",
      "gen_ai.prompt": "p",
      "gen_ai.completion": "c"
    })).toEqual({ operation: null, model: "r", input_tokens: 1, output_tokens: 2, input: "p", output: "c" })
    expect(GenAi.genAiOf({ "llm.model_name": "o", "llm.token_count.prompt": "3", "input.value": "i", "gen_ai.input.messages": "[]" }))
      .toMatchObject({ model: "o", input_tokens: 3, input: "i" })
    // A count that is not a count is no count.
    expect(GenAi.genAiOf({ "gen_ai.usage.input_tokens": "-1", "gen_ai.usage.output_tokens": "1.5" })).toBeNull()
    expect(GenAi.genAiOf({ "http.method": "GET" })).toBeNull()
  })

  it("usage sums the innermost spans that report tokens, so a parent that adds up its children is not counted twice", () => {
    const tokens = (i: number, o: number) => ({ "gen_ai.usage.input_tokens": String(i), "gen_ai.usage.output_tokens": String(o) })
    const tree = [
      node(tokens(100, 100), [node(tokens(10, 1), [node({})]), node({}, [node(tokens(5, 2))])]),
      node(tokens(1, 1))
    ]
    expect(GenAi.usageOf(tree)).toEqual({ input_tokens: 16, output_tokens: 4 })
    expect(GenAi.usageOf([node({ "gen_ai.request.model": "m" })])).toBeNull()
    expect(GenAi.modelOf([node({}, [node({ "gen_ai.request.model": "inner" })]), node({ "gen_ai.request.model": "later" })]))
      .toBe("inner")
  })

  it("a trace's input and output: input.value, else gen_ai.input.messages, else gen_ai.prompt (and likewise for output)", () => {
    const span = (attributes: Record<string, string>) => ({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
      attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } }))
    })
    const traceOf = (attributes: Record<string, string>) => Otlp.tracesOf({ scopeSpans: [{ spans: [span(attributes)] }] })[0]!
    expect(traceOf({ "gen_ai.input.messages": "[m]", "gen_ai.prompt": "p", "gen_ai.output.messages": "[o]" }))
      .toMatchObject({ input: "[m]", output: "[o]" })
    expect(traceOf({ "input.value": "i", "gen_ai.input.messages": "[m]", "gen_ai.completion": "c" })).toMatchObject({ input: "i", output: "c" })
  })
})
