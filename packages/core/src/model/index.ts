/**
 * The domain model: records, identifiers, errors, and the pure rules over
 * them (who may do what, how a turn starts).
 */
export * as Account from "./Account.js"
export * as Audit from "./Audit.js"
export * as Agent from "./Agent.js"
export * as AgentSpec from "./AgentSpec.js"
export * as Conversation from "./Conversation.js"
export * as Deployment from "./Deployment.js"
export * as Errors from "./Errors.js"
export * as Event from "./Event.js"
export * as File from "./File.js"
export * as GenAi from "./GenAi.js"
export * as Ids from "./Ids.js"
export * as Otlp from "./Otlp.js"
export * as Policy from "./Policy.js"
export * as Principal from "./Principal.js"
export * as SchemaIssues from "./SchemaIssues.js"
export * as Secret from "./Secret.js"
export * as Text from "./Text.js"
export * as Token from "./Token.js"
export * as Trace from "./Trace.js"
export * as Turn from "./Turn.js"
