/**
 * The dashboard's pure pieces, without a browser: placing reply deltas,
 * matching routes, the numbers of the latency chart, what a role may do to
 * members, and the token form's request.
 */
import { describe, expect, it } from "vitest"
import { placeDelta } from "../src/api/replies.js"
import { formatMs, niceCeiling } from "../src/chart.js"
import { match, pathOf } from "../src/paths.js"
import { asRole, inviteRoles, memberActions, roles } from "../src/roles.js"
import { accountsText, tokenRequest } from "../src/tokens.js"

describe("reply deltas (docs/chat.md: each delta carries its index)", () => {
  it("appends a delta that starts where the text ends", () => {
    expect(placeDelta("", 0, "hello")).toBe("hello")
    expect(placeDelta("hello", 5, " world")).toBe("hello world")
  })

  it("drops a delta repeated after a reconnection, and trims one that overlaps", () => {
    expect(placeDelta("hello world", 5, " world")).toBe("hello world")
    expect(placeDelta("hello wo", 0, "hello world")).toBe("hello world")
    expect(placeDelta("hello", 3, "lo there")).toBe("hello there")
  })

  it("keeps a delta that comes after a gap rather than lose it", () => {
    expect(placeDelta("ab", 5, "xyz")).toBe("abxyz")
  })
})

describe("routes", () => {
  it("matches literal segments and decodes parameters", () => {
    expect(match("/agents/:account/:name", "/agents/acme/helper")).toEqual({ account: "acme", name: "helper" })
    expect(match("/agents/:account/:name", "/agents/acme/helper/traces")).toBeUndefined()
    expect(match("/deployments/:deployment/files", "/deployments/dep%2F1/files")).toEqual({ deployment: "dep/1" })
    expect(match("/", "/")).toEqual({})
    expect(match("/accounts/:account", "/accounts/%E0%A4%A")).toBeUndefined()
  })

  it("builds paths with each segment encoded", () => {
    expect(pathOf("deployments", "dep/1", "chat")).toBe("/deployments/dep%2F1/chat")
    expect(match("/deployments/:deployment/chat", pathOf("deployments", "a b?", "chat"))).toEqual({ deployment: "a b?" })
  })
})

describe("latency chart numbers", () => {
  it("rounds the axis up to 1, 2 or 5 times a power of ten", () => {
    expect(niceCeiling(0)).toBe(1)
    expect(niceCeiling(12.5)).toBe(20)
    expect(niceCeiling(367)).toBe(500)
    expect(niceCeiling(500)).toBe(500)
    expect(niceCeiling(755)).toBe(1000)
    expect(niceCeiling(0.3)).toBeCloseTo(0.5)
  })

  it("writes latencies in ms, or in s from a second on", () => {
    expect(formatMs(0)).toBe("0 ms")
    expect(formatMs(7.25)).toBe("7.3 ms")
    expect(formatMs(12.5)).toBe("13 ms")
    expect(formatMs(1500)).toBe("1.5 s")
    expect(formatMs(12_000)).toBe("12 s")
  })
})

describe("member actions (core Policy: roleChangeRefusal, removalRefusal)", () => {
  const owner = { id: "alice", role: "owner" as const }
  const admin = { id: "carol", role: "admin" as const }
  const member = { id: "bob", role: "member" as const }

  it("lets owners give any role and remove anyone, and leave themselves", () => {
    expect(memberActions(owner, { user_id: "carol", role: "admin" })).toEqual({ roles, removal: "remove" })
    expect(memberActions(owner, { user_id: "alice", role: "owner" })).toEqual({ roles, removal: "leave" })
  })

  it("lets admins remove members only, with no role to give (they can only leave a member a member)", () => {
    expect(memberActions(admin, { user_id: "bob", role: "member" })).toEqual({ roles: [], removal: "remove" })
    expect(memberActions(admin, { user_id: "alice", role: "owner" })).toEqual({ roles: [], removal: undefined })
    expect(memberActions(admin, { user_id: "dave", role: "admin" })).toEqual({ roles: [], removal: undefined })
    expect(memberActions(admin, { user_id: "carol", role: "admin" })).toEqual({ roles: [], removal: "leave" })
  })

  it("lets a plain member only leave", () => {
    expect(memberActions(member, { user_id: "alice", role: "owner" })).toEqual({ roles: [], removal: undefined })
    expect(memberActions(member, { user_id: "bob", role: "member" })).toEqual({ roles: [], removal: "leave" })
  })

  it("invites with any role as owner, member as admin, not at all otherwise", () => {
    expect(inviteRoles("owner")).toEqual(["owner", "admin", "member"])
    expect(inviteRoles("admin")).toEqual(["member"])
    expect(inviteRoles("member")).toEqual([])
    expect(inviteRoles(undefined)).toEqual([])
  })

  it("reads a role from the session's plain string", () => {
    expect(asRole("admin")).toBe("admin")
    expect(asRole("root")).toBeUndefined()
    expect(asRole(undefined)).toBeUndefined()
  })
})

describe("the token form (POST /tokens)", () => {
  const form = { name: " ci deploy ", scopes: ["deploy", "read"] as const, accounts: [], days: 30 }

  it("builds the request: trimmed name, scopes in the API's order, the lifetime in seconds, no accounts for all", () => {
    expect(tokenRequest(form)).toEqual({
      ok: true,
      request: { name: "ci deploy", scopes: ["read", "deploy"], expires_in: 30 * 86_400 }
    })
  })

  it("names the accounts chosen, once each", () => {
    const checked = tokenRequest({ ...form, accounts: ["acme", "beta", "acme"], days: 366 })
    expect(checked).toEqual({
      ok: true,
      request: { name: "ci deploy", scopes: ["read", "deploy"], expires_in: 366 * 86_400, accounts: ["acme", "beta"] }
    })
  })

  it("refuses a blank or too long name and an empty scope list, naming the field", () => {
    expect(tokenRequest({ ...form, name: "   " })).toMatchObject({ ok: false, field: "name" })
    expect(tokenRequest({ ...form, name: "x".repeat(101) })).toMatchObject({ ok: false, field: "name" })
    expect(tokenRequest({ ...form, scopes: [] })).toMatchObject({ ok: false, field: "scopes" })
  })

  it("says 'all' for a token without an account list", () => {
    expect(accountsText(null)).toBe("all")
    expect(accountsText(["acme", "beta"])).toBe("acme, beta")
  })
})
