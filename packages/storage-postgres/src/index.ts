export * as PostgresStorage from "./PostgresStorage.js"
