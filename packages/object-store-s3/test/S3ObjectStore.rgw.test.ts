/**
 * The same checks against Ceph's RADOS Gateway, a real S3 implementation.
 * Start it with `shared/tools/ceph-up.sh` (RGW_PORT, default 7480) or point
 * HOSTING_TEST_S3_ENDPOINT at one; when HOSTING_TEST_S3_ENDPOINT is set the
 * gateway must answer, otherwise these tests are skipped.
 */
import { describe, it } from "@effect/vitest"
import { ObjectStoreSuite } from "@hosting/testing"
import * as S3Suite from "./S3Suite.js"
import { rgw, rgwAnswers, rgwEndpoint } from "./S3Servers.js"

const required = process.env["HOSTING_TEST_S3_ENDPOINT"] !== undefined

if (required || (await rgwAnswers())) {
  ObjectStoreSuite.run("s3 (Ceph RGW)", rgw)
  S3Suite.run("Ceph RGW", rgw)
} else {
  describe("S3ObjectStore on Ceph RGW", () => {
    it.skip(`skipped: no S3 server answers at ${rgwEndpoint}; start one with shared/tools/ceph-up.sh or set HOSTING_TEST_S3_ENDPOINT`, () => {})
  })
}
