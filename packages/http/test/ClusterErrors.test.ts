/**
 * What a cluster failure answers (docs/deployments.md, "Errors from the
 * cluster"): the reason the port gives picks the status and the code, and the
 * port's message (safe by its contract) is the details.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cluster } from "@hosting/core"
import { ErrorMapping } from "@hosting/http"

describe("HTTP: cluster failures", () => {
  it("a conflict (a namespace the platform did not make) is 409 cluster_conflict; unreachable 503; the platform's own trouble 500", () => {
    const cases = [
      ["Conflict", 409, "cluster_conflict"],
      ["Unavailable", 503, "cluster_unavailable"],
      ["Forbidden", 500, "cluster_error"],
      ["Invalid", 500, "cluster_error"]
    ] as const
    for (const [reason, status, code] of cases) {
      const message = `Could not create namespace kube-system: ${reason}.`
      const answer = ErrorMapping.fromDomain(new Cluster.ClusterError({ reason, message, cause: new Error("the cluster's own words") }))
      expect([answer._tag, answer.error, answer.details], reason).toEqual([
        status === 409 ? "Conflict" : status === 503 ? "ServiceUnavailable" : "InternalError",
        code,
        message
      ])
    }
  })
})
