/**
 * How the SQL storage writes and reads times (`@hosting/storage-sql`'s
 * internal `timeText` and `timeOf`): ISO 8601 UTC text with milliseconds;
 * a time read back after it was written is the time written (one object,
 * which carries its encoding to the answers); a time in the written form is
 * read without the date parser, to the same instant the parser gives, and
 * any other text is read by the parser.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import { storedMillis, timeOf, timeText } from "../../storage-sql/src/internal/sql.js"

/** A deterministic stream of numbers in [0, 1) (a linear congruential generator), so a failure can be replayed. */
const numbers = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648

const pad = (value: number, width: number) => String(value).padStart(width, "0")

describe("stored times", () => {
  it("a time written is read back as the same time, and its text is ISO 8601 UTC with milliseconds", () => {
    const written = DateTime.unsafeMake(Date.UTC(2026, 11, 7, 8, 9, 10, 11))
    const text = timeText(written)
    expect(text).toBe("2026-12-07T08:09:10.011Z")
    expect(timeText(written)).toBe(text)
    expect(timeOf(text)).toBe(written)
    // Each instant its own text, whichever object carries it and in whatever order they come.
    const later = DateTime.unsafeMake(written.epochMillis + 1)
    expect(timeText(later)).toBe("2026-12-07T08:09:10.012Z")
    expect(timeText(DateTime.unsafeMake(written.epochMillis))).toBe(text)
  })

  it("the latest times are kept: one kept long ago is parsed again from its text, to the same instant", () => {
    const start = Date.UTC(2030, 0, 1)
    const written = Array.from({ length: 30_000 }, (_, i) => DateTime.unsafeMake(start + i))
    for (const time of written) timeText(time)
    for (const time of written.slice(-1_000)) expect(timeOf(timeText(time))).toBe(time)
    const early = written[1]!
    const again = timeOf(DateTime.formatIso(early))
    expect(again).not.toBe(early)
    expect(again.epochMillis).toBe(early.epochMillis)
    // Parsed, it is kept in turn.
    expect(timeOf(DateTime.formatIso(early))).toBe(again)
  })

  it("a time in the written form is read to the instant the date parser gives, day overflow included", () => {
    const next = numbers(20261207)
    for (let i = 0; i < 5_000; i++) {
      const text = `${pad(100 + Math.floor(next() * 9900), 4)}-${pad(1 + Math.floor(next() * 12), 2)}-` +
        `${pad(1 + Math.floor(next() * 31), 2)}T${pad(Math.floor(next() * 24), 2)}:${pad(Math.floor(next() * 60), 2)}:` +
        `${pad(Math.floor(next() * 60), 2)}.${pad(Math.floor(next() * 1000), 3)}Z`
      expect(storedMillis(text), text).toBe(DateTime.unsafeMake(text).epochMillis)
    }
    // The 30th of February is the 2nd of March for the parser.
    expect(storedMillis("2026-02-30T00:00:00.000Z")).toBe(Date.UTC(2026, 2, 2))
  })

  it("any other text is left to the date parser: other forms are read as it reads them, and what it refuses is refused", () => {
    /** What reading `text` gives: its instant, or "refused". */
    const outcome = (read: (text: string) => DateTime.Utc, text: string) => {
      try {
        return read(text).epochMillis
      } catch {
        return "refused"
      }
    }
    for (
      const text of [
        "2026-12-07T08:09:10Z",
        "2026-12-07T08:09:10.5Z",
        "2026-12-07T08:09:10.011+01:00",
        "2026-12-07t08:09:10.011z",
        "2026-12-07T24:00:00.000Z",
        "0099-12-07T08:09:10.011Z",
        "+012026-12-07T08:09:10.011Z",
        "2026-13-07T08:09:10.011Z",
        "2026-12-32T08:09:10.011Z",
        "2026-12-07T08:60:10.011Z",
        "2026-12-07T08:09:1x.011Z"
      ]
    ) {
      expect(storedMillis(text), text).toBeNaN()
      expect(outcome(timeOf, text), text).toBe(outcome(DateTime.unsafeMake, text))
    }
    expect(outcome(timeOf, "2026-12-07T08:60:10.011Z")).toBe("refused")
  })
})
