/** The MCP suite (McpSuite.ts) on in-memory storage. */
import * as McpSuite from "./McpSuite.js"

McpSuite.run("in-memory")
