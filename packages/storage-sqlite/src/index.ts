export * as SqliteStorage from "./SqliteStorage.js"
