/**
 * An agent's deployment history is read from an index in the order it is
 * answered (migration 0019): SQLite's plan searches the agent's history
 * index and sorts nothing, for one account of the caller's or several.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@hosting/core"
import { SqlDeploymentStore } from "@hosting/storage-sql"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Effect } from "effect"

describe("sqlite: deployment history index", () => {
  it.layer(SqliteStorage.layer({ filename: ":memory:" }))((it) => {
    it.effect("the history of an agent searches its history index and needs no sort", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const publisher = Ids.AccountId.make("acct-1")
        const agent = Ids.AgentName.make("helper")
        for (const accounts of [[publisher], [publisher, Ids.AccountId.make("acct-2")]]) {
          const [text, params] = SqlDeploymentStore.agentHistoryStatement(sql, publisher, agent, accounts).compile()
          const plan = yield* sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
          const details = plan.map((row) => row.detail).join("\n")
          expect(details).toMatch(/SEARCH d USING INDEX deployments_agent_history/)
          expect(details).not.toMatch(/TEMP B-TREE/)
        }
      }))
  })
})
