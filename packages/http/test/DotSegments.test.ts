/**
 * Which request targets have `.` or `..` segments (refused with a 400 before routing).
 */
import { describe, expect, it } from "@effect/vitest"
import { DotSegments } from "@hosting/http"

describe("DotSegments.hasDotSegment", () => {
  it("finds raw, escaped and backslash-separated dot segments in the path", () => {
    for (const target of [
      "/a/../b", "/a/./b", "/..", "/.", "/a/..", "/a/%2e%2e/b", "/a/%2E/b", "/a/.%2e/b", "/a/%2e./b", "/a\\..\\b", "/a/..?x=1"
    ]) {
      expect(DotSegments.hasDotSegment(target), target).toBe(true)
    }
  })

  it("leaves dots inside names and in the query alone", () => {
    for (const target of ["/", "/favicon.svg", "/a/a..b/c", "/a/...", "/a/.env", "/a/b?path=../x", "/a/b#../x", "/a/%2e%2e%2e", "/a/..%2fb"]) {
      expect(DotSegments.hasDotSegment(target), target).toBe(false)
    }
  })
})
