/**
 * What the OpenTelemetry GenAI semantic conventions (and OpenInference's,
 * still read) say about a span: the operation, the model, the token usage,
 * and what went in and came out. Read from a span's attributes as stored
 * (as text), when a trace is shown, so spans stored before are read alike.
 */
import { Schema } from "effect"

/** Attribute keys, the first present wins: OpenInference first, then the GenAI conventions, then their older names. */
export const keys = {
  operation: ["gen_ai.operation.name"],
  model: ["gen_ai.request.model", "gen_ai.response.model", "llm.model_name"],
  input_tokens: ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"],
  output_tokens: ["gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"],
  input: ["input.value", "gen_ai.input.messages", "gen_ai.prompt"],
  output: ["output.value", "gen_ai.output.messages", "gen_ai.completion"]
} as const

/** The GenAI facts of one span; each is null when the span does not carry it. */
export const GenAi = Schema.Struct({
  operation: Schema.NullOr(Schema.String),
  model: Schema.NullOr(Schema.String),
  input_tokens: Schema.NullOr(Schema.NonNegativeInt),
  output_tokens: Schema.NullOr(Schema.NonNegativeInt),
  input: Schema.NullOr(Schema.String),
  output: Schema.NullOr(Schema.String)
}).annotations({ identifier: "GenAi" })
export type GenAi = typeof GenAi.Type

/** The tokens a trace used, summed over its spans (`usageOf`). */
export const Usage = Schema.Struct({
  input_tokens: Schema.NonNegativeInt,
  output_tokens: Schema.NonNegativeInt
}).annotations({ identifier: "Usage" })
export type Usage = typeof Usage.Type

const first = (attributes: Readonly<Record<string, string>>, names: ReadonlyArray<string>): string | null => {
  for (const name of names) {
    const value = attributes[name]
    if (value !== undefined) return value
  }
  return null
}

const count = (text: string | null): number | null => {
  if (text === null || !/^\d{1,15}$/.test(text)) return null
  return Number(text)
}

/** The GenAI facts of a span's attributes, or null when it carries none of them. */
export const genAiOf = (attributes: Readonly<Record<string, string>>): GenAi | null => {
  const facts: GenAi = {
    operation: first(attributes, keys.operation),
    model: first(attributes, keys.model),
    input_tokens: count(first(attributes, keys.input_tokens)),
    output_tokens: count(first(attributes, keys.output_tokens)),
    input: first(attributes, keys.input),
    output: first(attributes, keys.output)
  }
  return Object.values(facts).every((value) => value === null) ? null : facts
}

/** A span with its facts and the spans under it. */
export interface Node {
  readonly gen_ai: GenAi | null
  readonly children: ReadonlyArray<Node>
}

const hasTokens = (facts: GenAi | null) => facts !== null && (facts.input_tokens !== null || facts.output_tokens !== null)

/**
 * The tokens of a span tree: the usage of each span that reports some and
 * has no span under it that reports any, summed. A span that adds up its
 * children's usage (an agent span over its LLM calls) is so not counted
 * twice. Null when no span reports usage.
 */
export const usageOf = (roots: ReadonlyArray<Node>): Usage | null => {
  let input = 0
  let output = 0
  let found = false
  /** Whether the subtree reports usage; adds its innermost reports. */
  const walk = (node: Node): boolean => {
    let below = false
    for (const child of node.children) below = walk(child) || below
    if (below) return true
    if (!hasTokens(node.gen_ai)) return false
    input += node.gen_ai!.input_tokens ?? 0
    output += node.gen_ai!.output_tokens ?? 0
    found = true
    return true
  }
  for (const root of roots) walk(root)
  return found ? { input_tokens: input, output_tokens: output } : null
}

/** The first model named in a span tree, parents before their children, in the order spans started. */
export const modelOf = (roots: ReadonlyArray<Node>): string | null => {
  for (const node of roots) {
    const model = node.gen_ai?.model ?? null
    if (model !== null) return model
    const below = modelOf(node.children)
    if (below !== null) return below
  }
  return null
}
