export * as MemoryStorage from "./MemoryStorage.js"
export * as StorageSuite from "./StorageSuite.js"
