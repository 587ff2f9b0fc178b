// The s3rver fork ships no types; only what the tests use is declared.
declare module "@20minutes/s3rver" {
  import type { Server } from "node:http"
  import type { AddressInfo } from "node:net"

  interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory?: string
    readonly configureBuckets?: ReadonlyArray<{ readonly name: string }>
  }

  export default class S3rver {
    constructor(options?: S3rverOptions)
    run(): Promise<AddressInfo>
    close(): Promise<void>
    /** Set once run() has resolved. */
    httpServer?: Server
  }
}
