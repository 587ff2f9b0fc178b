/**
 * Query parameters of paged lists (traces, an account's audit log): `limit`
 * and `offset`, whole numbers written in digits.
 */
import { Schema } from "effect"

/** A whole number written in decimal digits only (no sign, exponent or hex). */
export const Digits = (what: string) =>
  Schema.String.pipe(
    Schema.pattern(/^\d{1,9}$/, { message: () => `${what}: must be a whole number written in digits` }),
    Schema.compose(Schema.NumberFromString)
  )

/** The `limit` and `offset` fields of a list of `noun` (plural, capitalised), at most `max` a page, `fallback` by default. */
export const pageFields = (noun: string, max: number, fallback: number) => ({
  limit: Schema.optional(Digits("limit").pipe(
    Schema.between(1, max, { message: () => `limit: must be from 1 to ${max}` })
  )).annotations({ description: `${noun} per page, from 1 to ${max} (default ${fallback})` }),
  offset: Schema.optional(Digits("offset")).annotations({ description: `${noun} to skip (default 0)` })
})
