/**
 * The rules of Policy, one by one: whom each allows, and the refusal (class
 * and details) it gives everyone else.
 */
import { describe, expect, it } from "@effect/vitest"
import { Account, Errors, Ids, Policy, type Principal } from "@hosting/core"
import { DateTime, Effect, Exit, Option } from "effect"

const acme = new Account.Account({
  id: Ids.AccountId.make("acc-acme"),
  name: Ids.AccountName.make("acme"),
  created_at: DateTime.unsafeMake(0)
})
const other = new Account.Account({
  id: Ids.AccountId.make("acc-other"),
  name: Ids.AccountName.make("other"),
  created_at: DateTime.unsafeMake(0)
})

/** A caller with the given role in acme (none: no membership at all). */
const caller = (role: Ids.Role | undefined, id = "user-1"): Principal.Principal => ({
  user: new Account.User({ id: Ids.UserId.make(id), name: id }),
  memberships: role === undefined ? [] : [new Account.Membership({ account_id: acme.id, account: acme.name, role })]
})

const owner = caller("owner")
const admin = caller("admin")
const member = caller("member")
const outsider = caller(undefined)

/** The deployment of acme as the deployment rules see it. */
const deployment = { account_id: acme.id, account: acme.name }

const refusalOf = <E>(refusal: Option.Option<E>) => Option.getOrThrow(refusal)

describe("Policy", () => {
  describe("membership", () => {
    it("isMemberOf: any role of the account counts; no membership does not", () => {
      expect([owner, admin, member].map((p) => Policy.isMemberOf(p, acme.id))).toEqual([true, true, true])
      expect(Policy.isMemberOf(outsider, acme.id)).toBe(false)
      expect(Policy.isMemberOf(member, other.id)).toBe(false)
    })

    it("isMemberByName: the account a path names, before it is read; another account's name is not", () => {
      expect([owner, admin, member].map((p) => Policy.isMemberByName(p, acme.name))).toEqual([true, true, true])
      expect(Policy.isMemberByName(outsider, acme.name)).toBe(false)
      expect(Policy.isMemberByName(member, other.name)).toBe(false)
    })

    it("memberAccountIdByName: the id of a member's account by its name, from the memberships; undefined for anyone else", () => {
      expect([owner, admin, member].map((p) => Policy.memberAccountIdByName(p, acme.name))).toEqual([acme.id, acme.id, acme.id])
      expect(Policy.memberAccountIdByName(outsider, acme.name)).toBeUndefined()
      expect(Policy.memberAccountIdByName(member, other.name)).toBeUndefined()
    })

    it("isMember: an anonymous caller is a member of no account", () => {
      expect(Policy.isMember(Option.some(member), acme)).toBe(true)
      expect(Policy.isMember(Option.some(outsider), acme)).toBe(false)
      expect(Policy.isMember(Option.none(), acme)).toBe(false)
    })

    it("memberAccounts: the accounts the caller belongs to", () => {
      expect(Policy.memberAccounts(member)).toEqual([acme.id])
      expect(Policy.memberAccounts(outsider)).toEqual([])
    })

    it("notMember: the 403 for a non-member, naming what the action needs when it is given", () => {
      expect(Policy.notMember(acme.name)).toEqual(new Errors.PermissionDenied({ details: "You are not a member of account acme." }))
      expect(Policy.notMember(acme.name, "following its events").details).toBe(
        "You are not a member of account acme; following its events needs membership."
      )
    })
  })

  describe("roles", () => {
    it.effect("requireManager: owner and admin may; a member and an outsider get 403 saying why", () =>
      Effect.gen(function*() {
        expect((yield* Policy.requireManager(owner, acme, "publishing a version")).role).toBe("owner")
        expect((yield* Policy.requireManager(admin, acme, "publishing a version")).role).toBe("admin")
        const denied = yield* Effect.flip(Policy.requireManager(member, acme, "publishing a version"))
        expect(denied).toEqual(new Errors.PermissionDenied({
          details: "Your role in account acme is member; publishing a version needs the role owner or admin."
        }))
        expect((yield* Effect.flip(Policy.requireManager(outsider, acme, "publishing a version"))).details).toBe(
          "You are not a member of account acme; publishing a version needs the role owner or admin."
        )
      }))

    it.effect("requireMember: every role may; an outsider gets 403 saying membership is needed", () =>
      Effect.gen(function*() {
        for (const p of [owner, admin, member]) expect(Exit.isSuccess(yield* Effect.exit(Policy.requireMember(p, acme, "reading the account")))).toBe(true)
        expect((yield* Effect.flip(Policy.requireMember(outsider, acme, "reading the account"))).details).toBe(
          "You are not a member of account acme; reading the account needs membership."
        )
      }))

    it("roleIn: the membership that allows, or the refusal, without an effect", () => {
      const allowed = Policy.roleIn(admin, acme, Policy.managerRoles, "renaming the account")
      expect(allowed.ok && allowed.membership.role).toBe("admin")
      const refused = Policy.roleIn(member, acme, Policy.managerRoles, "renaming the account")
      expect(!refused.ok && refused.refusal._tag).toBe("PermissionDenied")
    })
  })

  describe("deployments", () => {
    it("chatRefusal: members of the deploying account may chat; others get 403", () => {
      expect(Option.isNone(Policy.chatRefusal(member, deployment))).toBe(true)
      expect(refusalOf(Policy.chatRefusal(outsider, deployment))).toEqual(
        new Errors.PermissionDenied({ details: "Only members of acme may chat with its deployments." })
      )
    })

    it("filesRefusal: members of the deploying account may use its files; others get 403", () => {
      expect(Option.isNone(Policy.filesRefusal(member, deployment))).toBe(true)
      expect(refusalOf(Policy.filesRefusal(outsider, deployment))).toEqual(
        new Errors.PermissionDenied({ details: "Only members of acme may use its deployments' files." })
      )
    })

    it("deploymentRefusal: members read a deployment, outsiders find it not found, undeploying needs owner or admin", () => {
      expect(Option.isNone(Policy.deploymentRefusal(member, acme, "dep-1", false))).toBe(true)
      expect(Option.isNone(Policy.deploymentRefusal(admin, acme, "dep-1", true))).toBe(true)
      expect(refusalOf(Policy.deploymentRefusal(outsider, acme, "dep-1", false))).toEqual(
        new Errors.DeploymentNotFound({ deployment: "dep-1" })
      )
      expect(refusalOf(Policy.deploymentRefusal(outsider, acme, "dep-1", true))._tag).toBe("DeploymentNotFound")
      expect(refusalOf(Policy.deploymentRefusal(member, acme, "dep-1", true))).toEqual(new Errors.PermissionDenied({
        details: "Your role in account acme is member; undeploying needs the role owner or admin."
      }))
    })

    it("namespaceRefusal: a namespace reached through an account must hold that account's deployment (403 otherwise)", () => {
      expect(Option.isNone(Policy.namespaceRefusal({ account_id: acme.id }, "ns-1", acme))).toBe(true)
      expect(refusalOf(Policy.namespaceRefusal({ account_id: other.id }, "ns-1", acme))).toEqual(
        new Errors.PermissionDenied({ details: "Namespace ns-1 does not belong to account acme." })
      )
    })

    it("seesAgentEnv: members of the agent's account see its env values; others do not", () => {
      expect(Policy.seesAgentEnv(member, acme.id)).toBe(true)
      expect(Policy.seesAgentEnv(member, other.id)).toBe(false)
    })
  })

  describe("agent activity", () => {
    it("readsAgentActivity: members of the agent's account, or of an account deploying it, may read; others may not", () => {
      expect(Policy.readsAgentActivity(member, acme.id, false)).toBe(true)
      expect(Policy.readsAgentActivity(outsider, acme.id, true)).toBe(true)
      expect(Policy.readsAgentActivity(outsider, acme.id, false)).toBe(false)
    })

    it("agentActivityRefused: the 403 names the agent and what was read", () => {
      const agent = Ids.AgentName.make("helper")
      expect(Policy.agentActivityRefused(acme.name, agent, "traces")).toEqual(new Errors.PermissionDenied({
        details: "Only members of acme or of an account that deploys acme/helper may read its traces."
      }))
      expect(Policy.agentActivityRefused(acme.name, agent, "deployments").details).toBe(
        "Only members of acme or of an account that deploys acme/helper may read its deployments."
      )
    })

    it("exportsTraces: only members of the agent's account may export its traces; the 403 names the agent", () => {
      expect(Policy.exportsTraces(member, acme.id)).toBe(true)
      expect(Policy.exportsTraces(outsider, acme.id)).toBe(false)
      expect(Policy.traceExportRefused("acme", "helper")).toEqual(
        new Errors.PermissionDenied({ details: "Only members of acme may export traces of acme/helper." })
      )
    })
  })

  describe("ownership", () => {
    it("owns: a conversation or file is its owner's alone, whatever the caller's role", () => {
      expect(Policy.owns(member, Ids.UserId.make("user-1"))).toBe(true)
      expect(Policy.owns(caller("owner", "user-2"), Ids.UserId.make("user-1"))).toBe(false)
    })
  })
})
