// Stands in for the `undici` package inside the example server's bundle.
// `@effect/platform-node` re-exports undici from NodeHttpClient, which its
// NodeHttpServer imports, so a bundle would load undici (about 20 MB and
// 80 ms) at every start although the server never makes a request with it:
// the HTTP agent runtime uses the global fetch. Anything that does reach
// for it gets a clear error instead of an undefined.
const missing = new Proxy({}, {
  get(_target, property) {
    throw new Error(`undici.${String(property)}: undici is left out of the example server's bundle (examples/server/tsup.config.ts)`)
  }
})
export default missing
