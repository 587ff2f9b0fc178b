export * as PgBuses from "./PgBuses.js"
export * as PgListener from "./PgListener.js"
export * as PgProcessLock from "./PgProcessLock.js"
export * as PostgresStorage from "./PostgresStorage.js"
