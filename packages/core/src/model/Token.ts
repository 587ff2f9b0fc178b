/**
 * Access tokens as users hold them: what a token may do (its scopes), and
 * the form of the tokens this service makes, which secret scanners can
 * recognize (a fixed prefix) and clients can check for typos (a checksum).
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { utf8ToBytes } from "@noble/hashes/utils.js"
import { Schema } from "effect"

/**
 * What a token may do. `read` every read; `chat` conversations and their
 * files; `publish` registering and publishing builds; `deploy` deploying and
 * undeploying; `admin` the account itself (its name, members and tokens).
 */
export const Scope = Schema.Literal("read", "chat", "publish", "deploy", "admin")
export type Scope = typeof Scope.Type

/** Every scope, in the order above: what a token without a scope list may do. */
export const allScopes: ReadonlyArray<Scope> = Scope.literals

/** The prefix of every token this service makes (`hst_`, for "hosting token"). */
export const tokenPrefix = "hst_"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** `length` characters of base 62 from random bytes (rejection sampling keeps every character equally likely). */
const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 248 = 4 * 62: bytes above it would favour the first characters.
      if (byte < 248 && out.length < length) out += alphabet[byte % 62]
    }
  }
  return out
}

/** Six base-62 characters from the first four bytes of the SHA-256 of `body`. */
const checksumOf = (body: string): string => {
  const digest = sha256(utf8ToBytes(body))
  let value = ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0
  let out = ""
  for (let i = 0; i < 6; i++) {
    out = alphabet[value % 62] + out
    value = Math.floor(value / 62)
  }
  return out
}

/** A new secret: a prefix, 32 random base-62 characters (about 190 bits) and a 6-character checksum. */
const newSecret = (prefix: string): string => {
  const body = randomBase62(32)
  return `${prefix}${body}${checksumOf(body)}`
}

/** A new token, `hst_…`. */
export const newToken = (): string => newSecret(tokenPrefix)

/** The prefix of invitation codes (`hsi_`, for "hosting invitation"). */
export const invitationPrefix = "hsi_"

/** A new invitation code, `hsi_…`, of the tokens' form. */
export const newInvitationCode = (): string => newSecret(invitationPrefix)

/** Whether a string has the form of a token this service made, its checksum included. */
export const isWellFormed = (token: string): boolean =>
  token.length === tokenPrefix.length + 38 && token.startsWith(tokenPrefix) &&
  /^[0-9A-Za-z]+$/.test(token.slice(tokenPrefix.length)) &&
  checksumOf(token.slice(tokenPrefix.length, -6)) === token.slice(-6)
