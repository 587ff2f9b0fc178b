/**
 * The whole HTTP contract of the service under /api/v1. The server
 * implements it and the client derives from it, so they cannot drift.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { A2aApi } from "./A2aApi.js"
import { AccountsApi } from "./AccountsApi.js"
import { AgentsApi, PublicAgentsApi } from "./AgentsApi.js"
import { InternalError, NotFound, PayloadTooLarge, ServiceUnavailable, TooManyRequests } from "./ApiErrors.js"
import { ChatApi } from "./ChatApi.js"
import { DeploymentsApi } from "./DeploymentsApi.js"
import { FilesApi } from "./FilesApi.js"
import { McpApi } from "./McpApi.js"
import { SetupApi, TokensApi } from "./IdentityApi.js"
import { OAuthApi, WellKnownApi } from "./OAuthApi.js"
import { describeDecodeErrors } from "./OpenApiDocument.js"
import { SessionApi } from "./SessionApi.js"
import { SignOnApi } from "./SignOnApi.js"
import { TracesApi } from "./TracesApi.js"

/** The path prefix of every route. */
export const basePath = "/api/v1" as const

export class HostingApi extends HttpApi.make("hosting")
  .add(PublicAgentsApi)
  .add(AgentsApi)
  .add(AccountsApi)
  .add(DeploymentsApi)
  .add(ChatApi)
  .add(FilesApi)
  .add(A2aApi)
  .add(McpApi)
  .add(TracesApi)
  .add(OAuthApi)
  .add(SessionApi)
  .add(SignOnApi)
  .add(SetupApi)
  .add(TokensApi)
  .addError(NotFound)
  .addError(PayloadTooLarge)
  .addError(TooManyRequests)
  .addError(InternalError)
  // A storage failure on any route: 503 storage_unavailable with Retry-After.
  .addError(ServiceUnavailable)
  .prefix(basePath)
  // Added after the prefix: RFC 8414 puts the metadata at the root, with the issuer's path after it.
  .add(WellKnownApi)
  .annotate(OpenApi.Title, "Agent hosting service")
  .annotate(OpenApi.Transform, describeDecodeErrors)
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.License, { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" })
  .annotate(
    OpenApi.Description,
    "Register, publish, deploy and chat with AI agents. Errors answer with { error, details }."
  )
{}
