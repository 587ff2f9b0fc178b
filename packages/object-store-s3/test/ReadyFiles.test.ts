/** A ready file's bytes never change (ReadyFilesSuite), on S3 (s3rver, which checks signatures): presigned uploads included. */
import { ReadyFilesSuite } from "@hosting/testing"
import { s3rver } from "./S3Servers.js"

ReadyFilesSuite.run("s3 (s3rver)", s3rver, { presigns: true })
