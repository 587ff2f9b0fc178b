export * as PgBuses from "./PgBuses.js"
export * as PostgresStorage from "./PostgresStorage.js"
