/**
 * Every storage port on one SqlClient, after running the migrations.
 * Dialect packages (SQLite, Postgres) provide the SqlClient.
 */
import { SqlClient } from "@effect/sql"
import { Errors, Ports } from "@hosting/core"
import { Effect, Layer } from "effect"
import * as Migrations from "./Migrations.js"
import * as SqlA2aTaskStore from "./SqlA2aTaskStore.js"
import * as SqlAccountStore from "./SqlAccountStore.js"
import * as SqlAgentStore from "./SqlAgentStore.js"
import * as SqlConversationStore from "./SqlConversationStore.js"
import * as SqlDeploymentStore from "./SqlDeploymentStore.js"
import * as SqlDeviceCodeStore from "./SqlDeviceCodeStore.js"
import * as SqlEventLog from "./SqlEventLog.js"
import * as SqlFileStore from "./SqlFileStore.js"
import * as SqlTokenStore from "./SqlTokenStore.js"
import * as SqlTraceStore from "./SqlTraceStore.js"

/** Transactions through the SqlClient (nested calls join the outer transaction). */
export const transactor = Layer.effect(
  Ports.Transactor,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Ports.Transactor.of({
      withTransaction: (effect) =>
        sql.withTransaction(effect).pipe(
          Effect.catchTag("SqlError", (cause) => Effect.fail(new Errors.StorageError({ operation: "transaction", cause })))
        )
    }))
)

/** Runs the migrations once when built. */
export const migrations = Layer.effectDiscard(
  Migrations.run.pipe(Effect.orDieWith((error) => new Error(`storage migration failed: ${error.message}`)))
)

/** Every storage port, migrated, on the SqlClient in context (and the A2A tasks, which servers may keep elsewhere). */
export const layer = Layer.mergeAll(
  SqlA2aTaskStore.layer,
  SqlAccountStore.layer,
  SqlAgentStore.layer,
  SqlConversationStore.layer,
  SqlDeploymentStore.layer,
  SqlEventLog.layer,
  SqlFileStore.layer,
  SqlTokenStore.layer,
  SqlTraceStore.layer,
  SqlDeviceCodeStore.layer,
  transactor
).pipe(Layer.provideMerge(migrations))
