/**
 * The agent specification file: YAML parsed into a map, then checked.
 * Checks never fail a registration; they produce warnings for the publisher.
 * Only text that cannot be read as a YAML mapping is refused.
 */
import { Effect } from "effect"
import { parseDocument } from "yaml"
import { ValidationWarning, type SpecMap } from "./Agent.js"
import { SpecInvalid } from "./Errors.js"

/** Top-level keys the platform understands. Anything else is reported as unknown. */
export const knownKeys: ReadonlyArray<string> = [
  "name",
  "description",
  "image",
  "port",
  "env",
  "model",
  "tools",
  "resources",
  "capabilities",
  "labels"
]

/** Largest specification accepted, in characters. */
export const maxSpecLength = 256 * 1024

/** Parses the YAML text of a spec into a map; a non-mapping document is refused. */
export const parse = (content: string): Effect.Effect<SpecMap, SpecInvalid> =>
  Effect.suspend(() => {
    if (content.length > maxSpecLength) {
      return Effect.fail(new SpecInvalid({ details: `it is longer than ${maxSpecLength} characters` }))
    }
    const doc = parseDocument(content, { prettyErrors: true, uniqueKeys: true })
    const firstError = doc.errors[0]
    if (firstError !== undefined) {
      const line = firstError.linePos?.[0]
      const where = line ? ` (line ${line.line}, column ${line.col})` : ""
      return Effect.fail(new SpecInvalid({ details: `YAML error${where}: ${firstError.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}` }))
    }
    let value: unknown
    try {
      value = doc.toJS({ maxAliasCount: 100 })
    } catch (error) {
      return Effect.fail(new SpecInvalid({ details: `YAML error: ${(error as Error).message}` }))
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return Effect.fail(new SpecInvalid({ details: "the document must be a mapping of keys to values" }))
    }
    return Effect.succeed(value as SpecMap)
  })

const warning = (code: string, path: string, message: string) => new ValidationWarning({ code, path, message })

/** The registry host and path without scheme or trailing slash, for comparing with an image reference. */
const registryPrefix = (registry: string) => registry.replace(/^[a-z]+:\/\//i, "").replace(/\/+$/, "").toLowerCase()

/**
 * The documented checks (docs/agent-spec.md): missing name or description,
 * a name that differs from the agent's, unknown top-level keys, an image
 * outside the registry, a port out of range, env values that are not strings.
 */
export const validate = (
  spec: SpecMap,
  agent: { readonly name: string; readonly registry: string }
): ReadonlyArray<ValidationWarning> => {
  const warnings: Array<ValidationWarning> = []
  const name = spec["name"]
  if (name === undefined || name === null || name === "") {
    warnings.push(warning("missing_name", "name", "The spec has no name."))
  } else if (typeof name !== "string") {
    warnings.push(warning("invalid_type", "name", "name should be a string."))
  } else if (name !== agent.name) {
    warnings.push(warning("name_mismatch", "name", `The spec names "${name}" but the agent is registered as "${agent.name}".`))
  }
  const description = spec["description"]
  if (description === undefined || description === null || description === "") {
    warnings.push(warning("missing_description", "description", "The spec has no description; the catalog shows it."))
  } else if (typeof description !== "string") {
    warnings.push(warning("invalid_type", "description", "description should be a string."))
  }
  for (const key of Object.keys(spec)) {
    if (!knownKeys.includes(key)) {
      warnings.push(warning("unknown_key", key, `Unknown top-level key "${key}"; it is kept but not used.`))
    }
  }
  const image = spec["image"]
  if (image !== undefined) {
    if (typeof image !== "string") {
      warnings.push(warning("invalid_type", "image", "image should be a string."))
    } else if (!image.toLowerCase().startsWith(registryPrefix(agent.registry) + "/")) {
      warnings.push(
        warning("image_registry_mismatch", "image", `The image ${image} is not in the agent's registry ${agent.registry}.`)
      )
    }
  }
  const port = spec["port"]
  if (port !== undefined && !(typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535)) {
    warnings.push(warning("invalid_port", "port", "port should be a whole number from 1 to 65535."))
  }
  const env = spec["env"]
  if (env !== undefined) {
    if (env === null || typeof env !== "object" || Array.isArray(env)) {
      warnings.push(warning("invalid_type", "env", "env should be a mapping of names to string values."))
    } else {
      for (const [key, value] of Object.entries(env)) {
        if (typeof value !== "string") {
          warnings.push(warning("invalid_env_value", `env.${key}`, `env.${key} should be a string; quote it in YAML.`))
        }
      }
    }
  }
  return warnings
}
