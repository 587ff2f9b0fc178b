export * as A2aAgentRuntime from "./A2aAgentRuntime.js"
