import { describe, expect, it } from "@effect/vitest"
import { Identity } from "@hosting/core"
import { Effect } from "effect"

/** What Web Crypto says the SHA-256 of a text is. */
const webCrypto = (text: string) =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(
    Effect.map((bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join(""))
  )

describe("Identity.hashToken", () => {
  it.effect("gives the SHA-256 of the published test vectors", () =>
    Effect.gen(function*() {
      expect(yield* Identity.hashToken("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
      expect(yield* Identity.hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      expect(yield* Identity.hashToken("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
        .toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }))

  it.effect("agrees with Web Crypto on the UTF-8 bytes of any text, across block boundaries", () =>
    Effect.gen(function*() {
      const lengths = [1, 11, 54, 55, 56, 57, 63, 64, 65, 119, 120, 121, 128, 1000, 4096]
      const texts = [...lengths.map((n) => "t".repeat(n)), "é✓ 👍🏽 token", "x".repeat(50) + "€€€", globalThis.crypto.randomUUID()]
      for (const text of texts) expect(yield* Identity.hashToken(text)).toBe(yield* webCrypto(text))
    }))
})
