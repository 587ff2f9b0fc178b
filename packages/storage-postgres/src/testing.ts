/**
 * Test support for suites that run against PostgreSQL, kept out of the main
 * entry so that a server importing the storage never loads it.
 */
export * as TestDatabase from "./TestDatabase.js"
