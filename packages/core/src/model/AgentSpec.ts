/**
 * The agent specification file: YAML parsed into a map, then checked.
 * Checks never fail a registration; they produce warnings for the publisher.
 * Only text that cannot be read as a YAML mapping is refused.
 */
import { Effect } from "effect"
import { parseDocument, stringify } from "yaml"
import { ValidationWarning, type SpecMap } from "./Agent.js"
import { SpecInvalid } from "./Errors.js"
import { isSecretRef } from "./Secret.js"

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
  "labels",
  "protocol",
  "endpoint",
  "version",
  "skills"
]

/** The protocols the platform speaks to an agent (`protocol` in its spec). */
export const protocols: ReadonlyArray<string> = ["openai", "a2a"]

/** The protocol of a spec that names none: OpenAI-compatible chat completions. */
export const defaultProtocol = "openai"

/**
 * The protocol a spec names, as written but trimmed and in lower case, when
 * it is not the default; undefined for a spec that names none or the default.
 */
export const protocolOf = (spec: SpecMap): string | undefined => {
  const value = spec["protocol"]
  if (value === undefined || value === null) return undefined
  const protocol = String(value).trim().toLowerCase()
  return protocol === "" || protocol === defaultProtocol ? undefined : protocol
}

/** Whether a text is an absolute http(s) URL. */
export const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

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

/**
 * The YAML text of a spec map. Shown instead of the registered text where
 * values are hidden: the text's comments and anchors could repeat them.
 */
export const render = (spec: SpecMap): string => stringify(spec)

/** Prefixes of credentials that services hand out, each followed by enough of the secret to be one. */
const credentialPrefixes: ReadonlyArray<RegExp> = [
  /^sk-[A-Za-z0-9_-]{16,}/, // OpenAI, Anthropic (sk-ant-), DeepSeek, ...
  /^(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe
  /^gh[pousr]_[A-Za-z0-9]{30,}/, // GitHub tokens
  /^github_pat_[A-Za-z0-9_]{30,}/,
  /^glpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /^xox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /^(?:AKIA|ASIA)[A-Z0-9]{16}$/, // AWS access key ids
  /^AIza[A-Za-z0-9_-]{35}$/, // Google API keys
  /^hf_[A-Za-z0-9]{30,}/, // Hugging Face
  /^npm_[A-Za-z0-9]{36}$/,
  /^eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\./, // a signed JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/
]

/** Names that say their value is a secret: `*_KEY`, `*_TOKEN`, `*_SECRET`, `PASSWORD`, ... */
const secretName = /(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?)$/i

/** A long run of letters and digits, mixed, without spaces: what a generated secret looks like (not `${VAR}`, a URL or a word). */
const randomLooking = (value: string) => /^[A-Za-z0-9+/=_.~-]{16,}$/.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value)

/** True when an env value looks like a credential: a known key format, or a random string under a secret's name. */
export const looksLikeCredential = (name: string, value: string): boolean =>
  credentialPrefixes.some((prefix) => prefix.test(value)) || (secretName.test(name) && randomLooking(value))

const warning = (code: string, path: string, message: string) => new ValidationWarning({ code, path, message })

/** The registry host and path without scheme or trailing slash, for comparing with an image reference. */
const registryPrefix = (registry: string) => registry.replace(/^[a-z]+:\/\//i, "").replace(/\/+$/, "").toLowerCase()

/**
 * The documented checks (docs/agent-spec.md): missing name or description,
 * a name that differs from the agent's, unknown top-level keys, an image
 * outside the registry, a port out of range, a protocol the platform does
 * not speak, an endpoint that is not an http(s) URL, env values that are
 * neither strings nor `{ secret: NAME }`, or that look like credentials.
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
  const protocol = spec["protocol"]
  if (protocol !== undefined && !(typeof protocol === "string" && protocols.includes(protocol.trim().toLowerCase()))) {
    warnings.push(warning(
      "invalid_protocol",
      "protocol",
      `protocol should be one of ${protocols.join(", ")} (the default: ${defaultProtocol}); replies to this agent fail until it is.`
    ))
  }
  const endpoint = spec["endpoint"]
  if (endpoint !== undefined && !(typeof endpoint === "string" && isHttpUrl(endpoint.trim()))) {
    warnings.push(warning(
      "invalid_endpoint",
      "endpoint",
      protocolOf(spec) === "a2a"
        ? "endpoint should be the http(s) URL of the agent's A2A card, or the base URL that serves it at /.well-known/agent-card.json."
        : "endpoint should be the http(s) base URL of the agent."
    ))
  }
  const env = spec["env"]
  if (env !== undefined) {
    if (env === null || typeof env !== "object" || Array.isArray(env)) {
      warnings.push(warning("invalid_type", "env", "env should be a mapping of names to string values or { secret: NAME }."))
    } else {
      for (const [key, value] of Object.entries(env)) {
        if (isSecretRef(value)) continue
        if (typeof value === "object" && value !== null && !Array.isArray(value) && "secret" in value) {
          warnings.push(warning(
            "invalid_secret_ref",
            `env.${key}`,
            `env.${key} should be { secret: NAME } alone, NAME in upper-case letters, digits and underscores (like API_KEY); ` +
              "it is left out of the agent's environment."
          ))
        } else if (typeof value !== "string") {
          warnings.push(warning(
            "invalid_env_value",
            `env.${key}`,
            `env.${key} should be a string (quote it in YAML) or { secret: NAME }.`
          ))
        } else if (looksLikeCredential(key, value)) {
          warnings.push(warning(
            "env_credential",
            `env.${key}`,
            `env.${key} looks like a credential; every member of the account and every deployment of the agent receive ` +
              `the spec. Use a secret instead: write \`${key}: { secret: ${key} }\` and set the secret in each deploying ` +
              "account (hosting secrets set)."
          ))
        }
      }
    }
  }
  return warnings
}
