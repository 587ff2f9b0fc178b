/**
 * A conversation's streaming replies are counted through the index of
 * streaming replies by conversation (migration 0020): the list of a user's
 * conversations searches it by each conversation's id, and reads none of
 * the replies streaming in other conversations.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { SqlConversationStore } from "@hosting/storage-sql"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Effect } from "effect"

describe("sqlite: streaming replies by conversation", () => {
  it.layer(SqliteStorage.layer({ filename: ":memory:" }))((it) => {
    it.effect("the conversation list counts each conversation's streaming replies by its id", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [text, params] = SqlConversationStore.listStatement(sql, "dep-1", "alice").compile()
        const plan = yield* sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
        const details = plan.map((row) => row.detail).join("\n")
        expect(details).toMatch(/SEARCH c USING INDEX conversations_owner/)
        expect(details).toMatch(/SEARCH m USING COVERING INDEX messages_streaming_conversation \(conversation_id=\?\)/)
      }))

    it.effect("the statements that read every streaming reply scan the same index, and the one keyed by status is gone", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* sql<{ readonly detail: string }>`EXPLAIN QUERY PLAN
          UPDATE messages SET lease_expires_at = 'later' WHERE lease_owner = 'p-1' AND status = 'streaming'`
        expect(plan.map((row) => row.detail).join("\n")).toMatch(/USING INDEX messages_streaming_conversation/)
        const indexes = yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master
          WHERE type = 'index' AND tbl_name = 'messages' AND name LIKE 'messages_streaming%'`
        expect(indexes.map((row) => row.name)).toEqual(["messages_streaming_conversation"])
      }))
  })
})
