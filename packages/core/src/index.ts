/**
 * @hosting/core: the domain model, the ports, the use cases over them, and
 * the machinery they run on. Every module is a namespace of this entry.
 */
export * from "./model/index.js"
export * from "./ports/index.js"
export * from "./usecases/index.js"
export * from "./runtime/index.js"
