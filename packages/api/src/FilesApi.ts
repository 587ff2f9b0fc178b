/**
 * Files of a deployment: reserve, upload, complete, list, download.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Deployment } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Forbidden, NotFound, PayloadTooLarge, ServiceUnavailable } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"

const deploymentId = HttpApiSchema.param("deploymentId", Deployment.DeploymentId)
const key = HttpApiSchema.param("key", Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)))
const fileKey = HttpApiSchema.param("fileKey", Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)))

export const ReserveRequest = Schema.Struct({
  filename: Schema.String,
  content_type: Schema.String,
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

/** File bytes, for the OpenAPI document. */
export const FileBytes = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "application/octet-stream" })
)

export class FilesApi extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("reserve")`/deployments/${deploymentId}/files`
      .setPayload(ReserveRequest)
      .addSuccess(ReserveResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Reserve a file: a pending record and the URL to upload its bytes to")
  )
  .add(
    HttpApiEndpoint.put("upload")`/deployments/${deploymentId}/files/${key}/content`
      .addSuccess(UploadResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(PayloadTooLarge)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Upload the bytes of a reserved file (stores without presigned uploads); 413 beyond its size")
  )
  .add(
    HttpApiEndpoint.post("complete")`/deployments/${deploymentId}/files/${key}/complete`
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
{}
