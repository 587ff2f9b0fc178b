export * as MemoryStorage from "./MemoryStorage.js"
export * as Seed from "./Seed.js"
export * as StorageSuite from "./StorageSuite.js"
export * as TestServices from "./TestServices.js"
