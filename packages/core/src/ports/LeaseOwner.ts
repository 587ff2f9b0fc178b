import { Context } from "effect"

/**
 * This process as the owner of reply leases, where the storage itself knows
 * whether that owner lives (Postgres: a session lock that the database
 * releases when the process's connection goes); `goneOwners` names the
 * owners that are gone. A storage without it leaves Chat to name an owner of
 * its own, and only the lease tells that a process stopped.
 */
export class LeaseOwner extends Context.Tag("@hosting/core/LeaseOwner")<LeaseOwner, {
  readonly name: string
}>() {}
