/**
 * Who is signed in, for every page: the session (from its cookie, checked
 * once at start) and the user's accounts with their roles (`GET /me`).
 * Any call answered 401 ends the session here too.
 */
import { createContext, type ComponentChildren } from "preact"
import { useCallback, useContext, useEffect, useMemo, useState } from "preact/hooks"
import { call, onUnauthorized } from "./api/runtime"
import * as Sessions from "./api/session"

/** An account of the signed-in user, with their role there. */
export interface Membership {
  readonly name: string
  readonly role: string
}

export type SessionState =
  | { readonly status: "checking" }
  | { readonly status: "signed-out"; readonly expired: boolean }
  | { readonly status: "signed-in"; readonly session: Sessions.Session; readonly accounts: ReadonlyArray<Membership> }

interface SessionContext {
  readonly state: SessionState
  /** Exchanges a token for a session. Fails with the API's problem. */
  readonly signIn: (token: string) => Promise<void>
  readonly signOut: () => Promise<void>
  /** Reads the accounts again (after a rename). */
  readonly refreshAccounts: () => Promise<void>
}

const Context = createContext<SessionContext | undefined>(undefined)

const accountsOf = async (): Promise<ReadonlyArray<Membership>> => {
  const me = await call((client) => client.accounts.me())
  return me.accounts.map((account) => ({ name: account.name, role: account.role }))
}

export const SessionProvider = ({ children }: { readonly children: ComponentChildren }) => {
  const [state, setState] = useState<SessionState>({ status: "checking" })

  const enter = useCallback(async (session: Sessions.Session) => {
    const accounts = await accountsOf()
    setState({ status: "signed-in", session, accounts })
  }, [])

  useEffect(() => {
    let live = true
    Sessions.current().then(
      async (session) => {
        if (!live) return
        if (session === undefined) setState({ status: "signed-out", expired: false })
        else await enter(session).catch(() => setState({ status: "signed-out", expired: false }))
      },
      () => live && setState({ status: "signed-out", expired: false })
    )
    return () => {
      live = false
    }
  }, [enter])

  useEffect(
    () =>
      onUnauthorized(() =>
        setState((current) => (current.status === "signed-in" ? { status: "signed-out", expired: true } : current))
      ),
    []
  )

  const signIn = useCallback(async (token: string) => {
    const session = await Sessions.signIn(token)
    await enter(session)
  }, [enter])

  const signOut = useCallback(async () => {
    try {
      await Sessions.signOut()
    } finally {
      setState({ status: "signed-out", expired: false })
    }
  }, [])

  const refreshAccounts = useCallback(async () => {
    const accounts = await accountsOf()
    setState((current) => (current.status === "signed-in" ? { ...current, accounts } : current))
  }, [])

  const value = useMemo(() => ({ state, signIn, signOut, refreshAccounts }), [state, signIn, signOut, refreshAccounts])
  return <Context.Provider value={value}>{children}</Context.Provider>
}

/** The session of the page. */
export const useSession = (): SessionContext => {
  const context = useContext(Context)
  if (context === undefined) throw new Error("useSession outside SessionProvider")
  return context
}

/** True when the signed-in user may manage the account (owner or admin). */
export const canManage = (state: SessionState, account: string) =>
  state.status === "signed-in" && state.accounts.some((a) => a.name === account && (a.role === "owner" || a.role === "admin"))

/** True when the signed-in user is a member of the account. */
export const isMember = (state: SessionState, account: string) =>
  state.status === "signed-in" && state.accounts.some((a) => a.name === account)
