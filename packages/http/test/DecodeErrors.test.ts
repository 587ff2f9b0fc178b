/**
 * A request that does not decode fails with the platform's
 * `HttpApiDecodeError`, made by our `refailParseError` without the schema
 * check the platform's constructor runs: the error must be the one the
 * platform's `refailParseError` makes, issues and message alike.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import { refailParseError } from "../src/ErrorResponses.js"

const Payload = Schema.Struct({
  title: Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" })),
  tags: Schema.Array(Schema.Literal("a", "b")),
  nested: Schema.Struct({ count: Schema.Number })
})

const failureOf = (input: unknown) => {
  const decoded = Schema.decodeUnknownEither(Payload, { errors: "all" })(input)
  if (Either.isRight(decoded)) throw new Error("the input decoded")
  return decoded.left
}

const bothWays = (error: ParseResult.ParseError) =>
  Effect.gen(function*() {
    const ours = yield* Effect.flip(refailParseError(error))
    const platform = yield* Effect.flip(HttpApiError.HttpApiDecodeError.refailParseError(error))
    return { ours, platform }
  })

describe("a request that does not decode", () => {
  it.effect("fails with the platform's HttpApiDecodeError, the same issues and message as the platform makes", () =>
    Effect.gen(function*() {
      for (
        const input of [
          { title: "", tags: ["c"], nested: { count: "1" } },
          { tags: [] },
          "not an object",
          { title: 5, tags: "a", nested: null }
        ]
      ) {
        const { ours, platform } = yield* bothWays(failureOf(input))
        expect(ours).toBeInstanceOf(HttpApiError.HttpApiDecodeError)
        expect(ours._tag).toBe("HttpApiDecodeError")
        expect(ours.issues.length).toBeGreaterThan(0)
        expect(ours.issues).toEqual(platform.issues)
        expect(ours.message).toBe(platform.message)
      }
    }))

  it.effect("its issues pass the error's own schema, which the constructor no longer checks", () =>
    Effect.gen(function*() {
      const ours = yield* Effect.flip(refailParseError(failureOf({ title: "", tags: ["c"], nested: {} })))
      const checked = Schema.validateEither(HttpApiError.HttpApiDecodeError)(ours)
      expect(Either.isRight(checked)).toBe(true)
    }))
})
