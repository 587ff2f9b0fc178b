export * as StorageSuite from "./StorageSuite.js"
