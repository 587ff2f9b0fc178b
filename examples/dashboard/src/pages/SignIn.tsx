/**
 * Sign-in: single sign-on when the server offers it (the browser goes to
 * the provider and comes back signed in), a pasted platform token, or a
 * code (the device flow: approve the code on the server's page, the
 * dashboard polls for the token and exchanges it for a session); while the
 * instance has no user, set it up with the setup code its server printed
 * (`POST /setup` makes the first user and a token, which signs in at once).
 * Tokens only travel to `POST /session`.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import * as id from "../api/ids"
import { asProblem, call, isAbort, type Problem } from "../api/runtime"
import * as Sessions from "../api/session"
import { OneTimeValue } from "../components/OneTimeValue"
import { ErrorNotice, PageHeading } from "../components/ui"
import { useAction, useResource } from "../hooks"
import { Link, navigate } from "../router"
import { useSession } from "../session"

/** The host of a provider's issuer, as the sign-in card names it. */
const hostOf = (issuer: string) => {
  try {
    return new URL(issuer).host
  } catch {
    return issuer
  }
}

/** Only paths of the dashboard itself may be where sign-in leads (no open redirect). */
const safeNext = (next: string | null) => (next !== null && /^\/(?!\/)/.test(next) && !next.startsWith("/api/") ? next : "/")

const DeviceSignIn = ({ onToken }: { readonly onToken: (token: string) => Promise<void> }) => {
  const [login, setLogin] = useState<Sessions.DeviceLogin | undefined>(undefined)
  const [error, setError] = useState<Problem | undefined>(undefined)
  const [status, setStatus] = useState("")
  const controller = useRef<AbortController | undefined>(undefined)

  useEffect(() => () => controller.current?.abort(), [])

  const start = async () => {
    controller.current?.abort()
    const abort = new AbortController()
    controller.current = abort
    setError(undefined)
    try {
      const started = await Sessions.startDeviceLogin()
      if (abort.signal.aborted) return
      setLogin(started)
      setStatus("Waiting for the approval…")
      let interval = started.interval
      while (!abort.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, interval * 1000))
        if (abort.signal.aborted) return
        if (Date.now() > started.expiresAt) throw asProblem(new Error("The code expired. Start again."))
        const poll = await Sessions.pollDeviceLogin(started, interval, abort.signal)
        if (poll._tag === "Token") {
          setStatus("Approved. Signing in…")
          await onToken(poll.accessToken)
          return
        }
        interval = poll.interval
      }
    } catch (failure) {
      if (isAbort(failure) || abort.signal.aborted) return
      setError(asProblem(failure))
      setLogin(undefined)
      setStatus("")
    }
  }

  return (
    <section aria-labelledby="device-heading" class="card">
      <h2 id="device-heading">Sign in with a code</h2>
      <p>Approve a one-time code on the server's sign-in page, here or on another device. No token is pasted.</p>
      {login === undefined ? (
        <button type="button" class="secondary" onClick={() => void start()}>
          Get a code
        </button>
      ) : (
        <div class="device-code">
          <p>
            Your code: <strong class="user-code">{login.userCode}</strong>
          </p>
          <p>
            <a href={login.verificationUriComplete} target="_blank" rel="noopener noreferrer">
              Open the approval page
            </a>{" "}
            (or go to <code>{login.verificationUri}</code> and type the code).
          </p>
          <button
            type="button"
            class="link-button"
            onClick={() => {
              controller.current?.abort()
              setLogin(undefined)
              setStatus("")
            }}
          >
            Cancel
          </button>
        </div>
      )}
      <p role="status" aria-live="polite" class="muted">
        {status}
      </p>
      <ErrorNotice error={error} context="Sign-in with a code failed" />
    </section>
  )
}

/**
 * The first user of a new instance. When the instance is made but signing
 * in with its token fails, the token is shown (once) rather than lost: no
 * second setup is possible.
 */
const SetupInstance = ({ onToken }: { readonly onToken: (token: string) => Promise<void> }) => {
  const [code, setCode] = useState("")
  const [userId, setUserId] = useState("")
  const [name, setName] = useState("")
  const [invalidUser, setInvalidUser] = useState(false)
  const [stranded, setStranded] = useState<string | undefined>(undefined)
  const setup = useAction(async () => {
    const made = await call((client) =>
      client.setup.complete({
        payload: { code: code.trim(), user_id: id.user(userId.trim()), ...(name.trim() === "" ? {} : { name: name.trim() }) }
      })
    )
    try {
      await onToken(made.token)
    } catch (failure) {
      setStranded(made.token)
      throw failure
    }
  })

  return (
    <section aria-labelledby="setup-heading" class="card">
      <h2 id="setup-heading">Set up a new instance</h2>
      <p>
        A server that starts without users prints a one-time setup code (<code>setup: XXXXX-…</code>) in its log. Use it to become
        the instance's first user and administrator. From a terminal, <code>hosting setup</code> does the same for the CLI.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const ok = id.isUserId(userId.trim())
          setInvalidUser(!ok)
          if (ok && code.trim() !== "") void setup.run()
        }}
      >
        <label for="setup-code">Setup code</label>
        <input
          id="setup-code"
          required
          autoComplete="off"
          spellcheck={false}
          value={code}
          aria-describedby="setup-code-help"
          onInput={(event) => setCode(event.currentTarget.value)}
        />
        <p id="setup-code-help" class="help">
          Case and dashes do not matter. A server prints a new code at each start while it has no user.
        </p>
        <label for="setup-user">User id</label>
        <input
          id="setup-user"
          required
          autoComplete="username"
          spellcheck={false}
          value={userId}
          aria-invalid={invalidUser}
          aria-describedby="setup-user-help"
          onInput={(event) => setUserId(event.currentTarget.value)}
        />
        <p id="setup-user-help" class={invalidUser ? "field-error" : "help"}>
          Letters, digits and . _ @ -, up to 128 characters; it names you in member lists and cannot change.
        </p>
        <label for="setup-name">Display name (optional)</label>
        <input id="setup-name" autoComplete="name" value={name} onInput={(event) => setName(event.currentTarget.value)} />
        <p class="help">Default: the user id.</p>
        <button type="submit" class="secondary" disabled={setup.busy}>
          {setup.busy ? "Setting up…" : "Set up and sign in"}
        </button>
      </form>
      <ErrorNotice error={setup.error} context={stranded === undefined ? "Setup failed" : "The instance is set up, but signing in failed"} />
      {stranded !== undefined && (
        <OneTimeValue
          label="Your token"
          value={stranded}
          note="Shown only now: it has every scope and no expiry. Sign in with it above, or give it to the CLI."
        />
      )}
    </section>
  )
}

export const SignInPage = ({ next }: { readonly next: string | null }) => {
  const { state, signIn } = useSession()
  const [token, setToken] = useState("")
  const enter = async (value: string) => {
    await signIn(value)
    navigate(safeNext(next), { replace: true })
  }
  const action = useAction(enter)
  // What this server offers besides tokens and codes: single sign-on, and setting up an instance without users.
  const methods = useResource((signal) => call((client) => client.signOn.methods(), signal), [])

  if (state.status === "signed-in") {
    return (
      <>
        <PageHeading title="Sign in">Signed in</PageHeading>
        <p>
          You are signed in as <strong>{state.session.user.name}</strong>. <Link href={safeNext(next)}>Continue</Link>.
        </p>
      </>
    )
  }

  const oidc = methods.data?.oidc ?? null
  return (
    <>
      <PageHeading title="Sign in">Sign in</PageHeading>
      {oidc !== null && (
        <section aria-labelledby="sso-heading" class="card">
          <h2 id="sso-heading">Single sign-on</h2>
          <p>Sign in at your organisation's provider ({hostOf(oidc.issuer)}); you come back here signed in.</p>
          <a class="button primary" href={`${oidc.login_url}?next=${encodeURIComponent(safeNext(next))}`}>
            Sign in with single sign-on
          </a>
        </section>
      )}
      <div class="grid-2">
        <section aria-labelledby="token-heading" class="card">
          <h2 id="token-heading">With a token</h2>
          <form
            onSubmit={(event) => {
              event.preventDefault()
              if (token.trim() !== "") void action.run(token)
            }}
          >
            <label for="token">Platform token</label>
            <input
              id="token"
              name="token"
              type="password"
              autoComplete="off"
              spellcheck={false}
              required
              value={token}
              onInput={(event) => setToken(event.currentTarget.value)}
              aria-describedby="token-help"
            />
            <p id="token-help" class="help">
              The token is sent once to start a session; the browser then keeps only an HttpOnly cookie.
            </p>
            <button type="submit" class="primary" disabled={action.busy}>
              {action.busy ? "Signing in…" : "Sign in"}
            </button>
          </form>
          <ErrorNotice error={action.error} context="Sign-in failed" />
        </section>
        <DeviceSignIn
          onToken={async (accessToken) => {
            await action.run(accessToken)
          }}
        />
        {methods.data?.setup === true && <SetupInstance onToken={enter} />}
      </div>
    </>
  )
}
