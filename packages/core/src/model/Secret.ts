/**
 * Secrets of an account and the environment of a deployment. A secret is a
 * named value an account keeps for its deployments: written, listed by name,
 * never read back. A spec's `env` entry `{ secret: NAME }`, or one of a
 * deploy's `env` overrides, refers to it; at deploy the deploying account's
 * value goes into a Kubernetes Secret that the workload reads, never into a
 * ConfigMap, the stored spec or the deployment record.
 */
import { Schema } from "effect"

/** Name of a secret: environment-variable style (upper case letters, digits, `_`; not starting with a digit). */
export const SecretName = Schema.String.pipe(
  Schema.pattern(/^[A-Z_][A-Z0-9_]{0,127}$/, {
    message: () => "must be 1-128 upper-case letters, digits or underscores, not starting with a digit (like API_KEY)"
  }),
  Schema.brand("SecretName")
)
export type SecretName = typeof SecretName.Type

/** Largest secret value, in UTF-8 bytes. */
export const maxSecretBytes = 64 * 1024

/** Size of a text in UTF-8 bytes. */
export const utf8Length = (text: string): number => new TextEncoder().encode(text).byteLength

/** A secret's value: 1 byte to 64 KiB of UTF-8 text, without NUL (an environment variable cannot hold one). */
export const SecretValue = Schema.String.pipe(
  Schema.filter((value) => value.length > 0 && !value.includes("\u0000") && utf8Length(value) <= maxSecretBytes, {
    message: () => `must be 1 to ${maxSecretBytes} bytes of text without the NUL character (U+0000)`,
    jsonSchema: { minLength: 1, maxLength: maxSecretBytes, pattern: "^[^\\u0000]*$" }
  })
)

/** A secret as it is listed: its name and when it was last set, never its value. */
export class SecretSummary extends Schema.Class<SecretSummary>("SecretSummary")({
  name: SecretName,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

const envNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

/** Name of an environment variable of a deployment (a C identifier, as POSIX shells take them). */
export const EnvName = Schema.String.pipe(
  Schema.pattern(envNamePattern, { message: () => "must be 1-128 letters, digits or underscores, not starting with a digit" })
)

/** Largest plain value of an env override, in characters. */
export const maxEnvValueLength = 32 * 1024

/** Most env overrides one deploy takes. */
export const maxEnvEntries = 100

/** A reference to a secret of the deploying account: `{ secret: NAME }` and nothing else. */
export const SecretRef = Schema.Struct({ secret: SecretName }).annotations({ parseOptions: { onExcessProperty: "error" } })
export type SecretRef = typeof SecretRef.Type

/** One env override: a plain value, or a reference to a secret. */
export const EnvValue = Schema.Union(
  Schema.String.pipe(
    Schema.maxLength(maxEnvValueLength),
    Schema.filter((value) => !value.includes("\u0000"), { message: () => "must not contain the NUL character (U+0000)" })
  ),
  SecretRef
)
export type EnvValue = typeof EnvValue.Type

/**
 * The env overrides of a deploy: name to plain value or secret reference, at
 * most 100. A name that is not one is refused, not dropped (a record's key
 * schema alone would drop it).
 */
export const EnvOverrides = Schema.Record({ key: Schema.String, value: EnvValue }).pipe(
  Schema.filter((env) => {
    const names = Object.keys(env)
    if (names.length > maxEnvEntries) return `must have at most ${maxEnvEntries} entries`
    const bad = names.find((name) => !envNamePattern.test(name))
    return bad === undefined || `${JSON.stringify(bad.slice(0, 40))} is not an env name: 1-128 letters, digits or underscores, not starting with a digit`
  }, { jsonSchema: { maxProperties: maxEnvEntries, propertyNames: { pattern: envNamePattern.source } } })
)
export type EnvOverrides = typeof EnvOverrides.Type

/** True when an env value (of a spec or of overrides) is a reference to a secret with a valid name. */
export const isSecretRef = (value: unknown): value is SecretRef =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  Object.keys(value).length === 1 && Schema.is(SecretName)((value as { secret?: unknown }).secret)

/**
 * What a caller outside the deploying account sees of env overrides: the
 * names, each value replaced (a secret reference too).
 */
export const overridesHidden = (env: EnvOverrides, hidden: string): Record<string, string> =>
  Object.fromEntries(Object.keys(env).map((name) => [name, hidden]))
