/**
 * Touches to the generated OpenAPI document so that it says what the server
 * does. The platform documents a request that fails to decode with its own
 * error schema (`HttpApiDecodeError`); this server answers those with the
 * `{ error, details }` body of `BadRequest`, so the document says that.
 */
const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"
const badRequestRef = "#/components/schemas/BadRequest"
/** Component schemas used only by the platform's decode error. */
const decodeOnlySchemas = ["HttpApiDecodeError", "Issue", "PropertyKey"]

type Json = Record<string, any>

/** The 400 schema without the decode error; BadRequest stands in when nothing else is left. */
const withoutDecodeError = (schema: Json): Json => {
  if (schema["$ref"] === decodeErrorRef) return { $ref: badRequestRef }
  const variants: Array<Json> | undefined = schema["anyOf"] ?? schema["oneOf"]
  if (variants === undefined) return schema
  const kept = variants.filter((v) => v["$ref"] !== decodeErrorRef)
  const withBadRequest = kept.some((v) => v["$ref"] === badRequestRef) ? kept : [...kept, { $ref: badRequestRef }]
  return withBadRequest.length === 1 ? withBadRequest[0]! : { ...schema, anyOf: withBadRequest, oneOf: undefined }
}

/** Rewrites every 400 response and drops the schemas nothing refers to any more. */
export const describeDecodeErrors = (spec: Json): Json => {
  for (const path of Object.values<Json>(spec["paths"] ?? {})) {
    for (const operation of Object.values<Json>(path)) {
      const response = operation?.["responses"]?.["400"]
      const media = response?.["content"]?.["application/json"]
      if (media?.["schema"] === undefined) continue
      media["schema"] = JSON.parse(JSON.stringify(withoutDecodeError(media["schema"])))
      response["description"] = "Invalid request body or parameters ({ error, details } naming the field)"
    }
  }
  const schemas: Json = spec["components"]?.["schemas"] ?? {}
  const text = JSON.stringify({ ...spec, components: { ...spec["components"], schemas: {} } })
  for (const name of decodeOnlySchemas) {
    const stillUsed = JSON.stringify(Object.entries(schemas).filter(([key]) => !decodeOnlySchemas.includes(key))).includes(`/${name}"`)
    if (!stillUsed && !text.includes(`/${name}"`)) delete schemas[name]
  }
  return spec
}
