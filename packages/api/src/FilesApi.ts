/**
 * Files of a deployment: reserve, upload, complete, list, download.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Deployment, Text } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge, ServiceUnavailable } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const deploymentId = HttpApiSchema.param("deploymentId", Deployment.DeploymentId)
const key = HttpApiSchema.param("key", Text.Text.pipe(Schema.minLength(1), Schema.maxLength(255)))
const fileKey = HttpApiSchema.param("fileKey", Text.Text.pipe(Schema.minLength(1), Schema.maxLength(255)))

export const ReserveRequest = Schema.Struct({
  filename: Text.Text,
  content_type: Text.Text,
  size: Schema.Number
})

export const FileView = Schema.Struct({
  key: Schema.String,
  filename: Schema.String,
  content_type: Schema.String,
  size: Schema.Int,
  status: Schema.Literal("pending", "ready"),
  origin: Schema.Literal("user", "agent"),
  conversation_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc
})

export const ReserveResponse = Schema.Struct({
  ...FileView.fields,
  upload_url: Schema.String,
  expires_at: Schema.DateTimeUtc
})

export const UploadResponse = Schema.Struct({ key: Schema.String, size: Schema.Int, status: Schema.Literal("pending") })

export const CompleteResponse = Schema.Struct({ key: Schema.String, status: Schema.Literal("ready"), size: Schema.Int })

export const ListResponse = Schema.Struct({ files: Schema.Array(FileView) })

/** File bytes, for the OpenAPI document: served with the file's own content type, so any. */
export const FileBytes = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "*/*" })
)

export class FilesApi extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("reserve")`/deployments/${deploymentId}/files`
      .annotate(RequiredScope, "chat")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(ReserveRequest)
      .addSuccess(ReserveResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Reserve a file: a pending record and the URL to upload its bytes to")
  )
  .add(
    // Named like the download's parameter: the two are one path of the document.
    HttpApiEndpoint.put("upload")`/deployments/${deploymentId}/files/${fileKey}/content`
      .annotate(RequiredScope, "chat")
      // Streamed to the object store by the handler, which limits it to the size reserved for the file.
      .annotate(BodyLimit, "streamed")
      .addSuccess(UploadResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(PayloadTooLarge)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Upload the bytes of a reserved file (stores without presigned uploads); 413 beyond its size, 409 once the file is complete")
      // The handler streams the body to the object store itself, so the endpoint declares no payload schema.
      .annotate(OpenApi.Override, {
        requestBody: {
          required: true,
          description: "The file's bytes, at most the size given when it was reserved",
          content: { "*/*": { schema: { type: "string", format: "binary" } } }
        }
      })
  )
  .add(
    HttpApiEndpoint.post("complete")`/deployments/${deploymentId}/files/${key}/complete`
      .annotate(RequiredScope, "chat")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(CompleteResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Mark a file ready once all its bytes arrived")
  )
  .add(
    HttpApiEndpoint.get("list")`/deployments/${deploymentId}/files`
      .addSuccess(ListResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The caller's files on the deployment, newest first")
  )
  .add(
    HttpApiEndpoint.get("download")`/deployments/${deploymentId}/files/${fileKey}/content`
      .addSuccess(FileBytes)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Description,
        "Streams the bytes (with Range support) or redirects to a presigned object-store URL; clients must follow redirects. " +
          "fileKey is a key from a reservation or the name of an agent-produced file."
      )
      .annotate(OpenApi.Summary, "Download a file")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Files")
  .annotate(OpenApi.Description, "Files of a deployment: reserve, upload, complete, list and download")
{}
