/**
 * Use-case tests of creating accounts and managing their members (issue 26):
 * who may give which role, who may remove whom, and that an account always
 * keeps an owner.
 */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Identity, Ids } from "@hosting/core"
import { Seed, StorageSuite, TestServices } from "@hosting/testing"
import { Effect } from "effect"

const roles = (members: ReadonlyArray<{ readonly user_id: string; readonly role: string }>) =>
  Object.fromEntries(members.map((m) => [m.user_id, m.role]))

describe("Accounts and members", () => {
  it.layer(TestServices.layer)((it) => {
    it.effect("a signed-in user creates an account and becomes its owner; a taken name is refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const name = Ids.AccountName.make(StorageSuite.uniqueName("new"))
        const created = yield* accounts.create(team.principals.outsider, name)
        expect([created.name, created.role]).toEqual([name, "owner"])
        const identity = yield* Identity.Identity
        const me = yield* accounts.me(yield* identity.authenticate(team.tokens.outsider))
        expect(me.accounts).toContainEqual({ name, role: "owner" })
        const taken = yield* Effect.flip(accounts.create(team.principals.member, team.account))
        expect([taken._tag, taken.code]).toEqual(["AccountExists", "account_name_taken"])
      }))

    it.effect("members see the member list; outsiders are refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const members = yield* accounts.members(team.principals.member, team.account)
        expect(roles(members)).toEqual({
          [team.principals.owner.user.id]: "owner",
          [team.principals.admin.user.id]: "admin",
          [team.principals.member.user.id]: "member"
        })
        expect((yield* Effect.flip(accounts.members(team.principals.outsider, team.account)))._tag).toBe("PermissionDenied")
      }))

    it.effect("owners give any role, and adding a known user makes them a member", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const outsider = team.principals.outsider.user.id
        const added = yield* accounts.setRole(team.principals.owner, team.account, outsider, "admin")
        expect([added.role, added.added]).toEqual(["admin", true])
        const promoted = yield* accounts.setRole(team.principals.owner, team.account, team.principals.member.user.id, "owner")
        expect([promoted.role, promoted.added]).toEqual(["owner", false])
        const identity = yield* Identity.Identity
        const them = yield* identity.authenticate(team.tokens.outsider)
        expect((yield* accounts.me(them)).accounts).toContainEqual({ name: team.account, role: "admin" })
        const unknown = yield* Effect.flip(accounts.setRole(team.principals.owner, team.account, Ids.UserId.make("nobody-at-all"), "member"))
        expect([unknown._tag, unknown.code]).toEqual(["UserNotFound", "user_not_found"])
      }))

    it.effect("admins add and keep members only; members manage no one", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const { admin, member, owner, outsider } = team.principals
        expect((yield* accounts.setRole(admin, team.account, outsider.user.id, "member")).added).toBe(true)
        for (const [target, role] of [[member.user.id, "admin"], [owner.user.id, "member"], [outsider.user.id, "owner"]] as const) {
          const refused = yield* Effect.flip(accounts.setRole(admin, team.account, target, role))
          expect(refused._tag).toBe("PermissionDenied")
          expect(refused.message).toContain("needs the role owner")
        }
        const byMember = yield* Effect.flip(accounts.setRole(member, team.account, outsider.user.id, "member"))
        expect(byMember._tag).toBe("PermissionDenied")
        expect(roles(yield* accounts.members(owner, team.account))[outsider.user.id]).toBe("member")
      }))

    it.effect("the last owner can neither be demoted nor leave (409 last_owner); with a second owner both work", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const { admin, owner } = team.principals
        const demoted = yield* Effect.flip(accounts.setRole(owner, team.account, owner.user.id, "admin"))
        expect([demoted._tag, demoted.code]).toEqual(["LastOwner", "last_owner"])
        const left = yield* Effect.flip(accounts.removeMember(owner, team.account, owner.user.id))
        expect(left._tag).toBe("LastOwner")
        yield* accounts.setRole(owner, team.account, admin.user.id, "owner")
        expect((yield* accounts.setRole(owner, team.account, owner.user.id, "member")).role).toBe("member")
        const members = roles(yield* accounts.members(admin, team.account))
        expect([members[owner.user.id], members[admin.user.id]]).toEqual(["member", "owner"])
      }))

    it.effect("owners remove anyone, admins remove members, a member may remove themself", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const { admin, member, owner, outsider } = team.principals
        expect((yield* Effect.flip(accounts.removeMember(member, team.account, admin.user.id)))._tag).toBe("PermissionDenied")
        expect((yield* Effect.flip(accounts.removeMember(admin, team.account, owner.user.id)))._tag).toBe("PermissionDenied")
        expect((yield* Effect.flip(accounts.removeMember(outsider, team.account, member.user.id)))._tag).toBe("PermissionDenied")
        const missing = yield* Effect.flip(accounts.removeMember(owner, team.account, outsider.user.id))
        expect([missing._tag, missing.code]).toEqual(["MemberNotFound", "member_not_found"])
        expect((yield* accounts.removeMember(member, team.account, member.user.id)).role).toBe("member")
        yield* accounts.setRole(owner, team.account, outsider.user.id, "member")
        yield* accounts.removeMember(admin, team.account, outsider.user.id)
        yield* accounts.removeMember(owner, team.account, admin.user.id)
        expect(Object.keys(roles(yield* accounts.members(owner, team.account)))).toEqual([owner.user.id])
        // The removed member's next request sees the account no more.
        const identity = yield* Identity.Identity
        const them = yield* identity.authenticate(team.tokens.member)
        expect((yield* accounts.me(them)).accounts).toEqual([])
        expect((yield* Effect.flip(accounts.members(them, team.account)))._tag).toBe("PermissionDenied")
      }))
  })
})
