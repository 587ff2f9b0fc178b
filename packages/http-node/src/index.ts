export * as NodeLogger from "./NodeLogger.js"
export * as NodeRequest from "./NodeRequest.js"
export * as NodeServer from "./NodeServer.js"
export * as Respond from "./Respond.js"
