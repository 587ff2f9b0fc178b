/**
 * Small hooks shared by the pages: loading what a page shows, with its
 * error and a way to load it again.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { asProblem, isAbort, type Problem } from "./api/runtime"

/** What a page loaded: the data once it came, the problem if it failed. */
export interface Resource<T> {
  readonly data: T | undefined
  readonly error: Problem | undefined
  readonly loading: boolean
  /** Loads again (the data shown stays until the new answer arrives). */
  readonly reload: () => void
  /** Replaces the data shown, after a change the page made itself. */
  readonly set: (update: (current: T | undefined) => T | undefined) => void
}

/**
 * Loads with `load` when the component mounts and whenever `deps` change;
 * an answer that arrives after the deps changed (or after unmount) is dropped,
 * and its request aborted.
 */
export const useResource = <T>(load: (signal: AbortSignal) => Promise<T>, deps: ReadonlyArray<unknown>): Resource<T> => {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<Problem | undefined>(undefined)
  const [loading, setLoading] = useState(true)
  const [round, setRound] = useState(0)
  const loader = useRef(load)
  loader.current = load

  useEffect(() => {
    const controller = new AbortController()
    setLoading(true)
    loader.current(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return
        setData(() => value)
        setError(undefined)
        setLoading(false)
      },
      (failure: unknown) => {
        if (controller.signal.aborted || isAbort(failure)) return
        setError(asProblem(failure))
        setLoading(false)
      }
    )
    return () => controller.abort()
  }, [...deps, round])

  const reload = useCallback(() => setRound((n) => n + 1), [])
  const set = useCallback((update: (current: T | undefined) => T | undefined) => setData(update), [])
  return { data, error, loading, reload, set }
}

/** The state of an action a person started (a form's submit): busy, its problem, its last result. */
export const useAction = <A extends ReadonlyArray<unknown>, T>(action: (...args: A) => Promise<T>) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Problem | undefined>(undefined)
  const [result, setResult] = useState<T | undefined>(undefined)
  const mounted = useRef(true)
  useEffect(() => () => {
    mounted.current = false
  }, [])
  const latest = useRef(action)
  latest.current = action
  const run = useCallback(async (...args: A): Promise<T | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      const value = await latest.current(...args)
      if (mounted.current) setResult(() => value)
      return value
    } catch (failure) {
      if (mounted.current) setError(asProblem(failure))
      return undefined
    } finally {
      if (mounted.current) setBusy(false)
    }
  }, [])
  const reset = useCallback(() => {
    setError(undefined)
    setResult(undefined)
  }, [])
  return { run, busy, error, result, reset }
}

/** Runs `tick` every `ms` while `active`; stops on unmount. */
export const useInterval = (tick: () => void, ms: number, active: boolean) => {
  const latest = useRef(tick)
  latest.current = tick
  useEffect(() => {
    if (!active) return
    const timer = window.setInterval(() => latest.current(), ms)
    return () => window.clearInterval(timer)
  }, [ms, active])
}
