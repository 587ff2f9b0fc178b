/**
 * V8's young generation kept at its first size while the server starts.
 *
 * A start allocates what lives on (every module's objects, the app's
 * layers), so each scavenge sees most of what it looked at survive, and V8
 * doubles the young generation's semi-spaces until they reach their most
 * (16 MB each); it never gives them back, so an idle server held 32 MB of
 * young generation it had needed only while it started, about a quarter of
 * its idle RSS (docs/performance.md, "Idle memory at start"). Until the
 * server listens, the young generation does not grow (V8 reads its growth
 * factor at each scavenge); then it grows as V8 grows it by default, under
 * the load that needs it. Flags an operator gives for the young generation
 * (`node --max-semi-space-size=...`, or in `NODE_OPTIONS`) are left alone.
 */
import { setFlagsFromString } from "node:v8"

/** Whether the operator chose the young generation's size or growth. */
const chosen = [...process.execArgv, ...(process.env["NODE_OPTIONS"] ?? "").split(/\s+/)]
  .some((flag) => /semi[-_]space/.test(flag))

/** Holds the young generation at its size: called before the server's modules load. */
export const hold = (): void => {
  if (!chosen) setFlagsFromString("--semi-space-growth-factor=1")
}

/** Lets it grow again by V8's default factor: called once the server listens. */
export const started = (): void => {
  if (!chosen) setFlagsFromString("--semi-space-growth-factor=2")
}
