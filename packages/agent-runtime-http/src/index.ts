export * as HttpAgentRuntime from "./HttpAgentRuntime.js"
