export * as S3ObjectStore from "./S3ObjectStore.js"
