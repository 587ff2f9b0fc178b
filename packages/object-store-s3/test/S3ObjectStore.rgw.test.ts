/**
 * The same checks against Ceph's RADOS Gateway, a real S3 implementation.
 * Start it with `shared/tools/ceph-up.sh` (RGW_PORT, default 7480) or point
 * HOSTING_TEST_S3_ENDPOINT at one; when HOSTING_TEST_S3_ENDPOINT is set the
 * gateway must answer, otherwise these tests are skipped.
 */
import { describe } from "@effect/vitest"
import { ObjectStoreSuite } from "@hosting/testing"
import * as S3Suite from "./S3Suite.js"
import { rgw, rgwAnswers, rgwEndpoint } from "./S3Servers.js"

const required = process.env["HOSTING_TEST_S3_ENDPOINT"] !== undefined

const available = required || (await rgwAnswers())

// Where no gateway answers, the suites are listed as skipped with the reason (CI starts one and runs them).
describe.skipIf(!available)(
  available ? "Ceph RGW" : `Ceph RGW: no S3 server answers at ${rgwEndpoint}; start one with shared/tools/ceph-up.sh`,
  () => {
    ObjectStoreSuite.run("s3 (Ceph RGW)", rgw)
    S3Suite.run("Ceph RGW", rgw)
  }
)
