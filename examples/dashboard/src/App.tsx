/**
 * The frame of every page (skip link, header with the navigation, main,
 * footer) and the table of routes.
 */
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { PageHeading } from "./components/ui"
import { AccountPage } from "./pages/Account"
import { AgentPage } from "./pages/Agent"
import { CatalogPage } from "./pages/Catalog"
import { ChatPage } from "./pages/Chat"
import { DeploymentsPage } from "./pages/Deployments"
import { FilesPage } from "./pages/Files"
import { InvitationPage } from "./pages/Invitation"
import { SignInPage } from "./pages/SignIn"
import { TokensPage } from "./pages/Tokens"
import { TraceDetailPage } from "./pages/TraceDetail"
import { TracesPage } from "./pages/Traces"
import { Link, match, navigate, pathOf, useLocation } from "./router"
import { useSession } from "./session"

interface Route {
  readonly pattern: string
  /** Needs a session; without one the page asks to sign in. */
  readonly private: boolean
  readonly render: (params: Record<string, string>, query: URLSearchParams) => ComponentChildren
}

const routes: ReadonlyArray<Route> = [
  { pattern: "/", private: false, render: (_, query) => <CatalogPage query={query} /> },
  { pattern: "/signin", private: false, render: (_, query) => <SignInPage next={query.get("next")} /> },
  { pattern: "/agents/:account/:name", private: false, render: (p) => <AgentPage account={p["account"]!} name={p["name"]!} /> },
  {
    pattern: "/agents/:account/:name/deployments",
    private: true,
    render: (p, query) => <DeploymentsPage account={p["account"]!} name={p["name"]!} selected={query.get("deployment")} />
  },
  { pattern: "/agents/:account/:name/traces", private: true, render: (p, query) => <TracesPage account={p["account"]!} name={p["name"]!} query={query} /> },
  {
    pattern: "/agents/:account/:name/traces/:trace",
    private: true,
    render: (p, query) => <TraceDetailPage account={p["account"]!} name={p["name"]!} traceId={p["trace"]!} query={query} />
  },
  { pattern: "/accounts/:account", private: true, render: (p) => <AccountPage account={p["account"]!} /> },
  { pattern: "/deployments/:deployment/chat", private: true, render: (p) => <ChatPage deploymentId={p["deployment"]!} conversationId={undefined} /> },
  {
    pattern: "/deployments/:deployment/chat/:conversation",
    private: true,
    render: (p) => <ChatPage deploymentId={p["deployment"]!} conversationId={p["conversation"]!} />
  },
  { pattern: "/deployments/:deployment/files", private: true, render: (p) => <FilesPage deploymentId={p["deployment"]!} /> },
  { pattern: "/tokens", private: true, render: () => <TokensPage /> },
  // Private: a signed-out visitor signs in first and comes back here to accept.
  { pattern: "/invitations/:code", private: true, render: (p) => <InvitationPage code={p["code"]!} /> }
]

const NotFound = () => (
  <>
    <PageHeading title="Not found">Page not found</PageHeading>
    <p>
      Nothing lives at this address. <Link href="/">Go to the catalog</Link>.
    </p>
  </>
)

const SignInFirst = ({ path, expired }: { readonly path: string; readonly expired: boolean }) => (
  <>
    <PageHeading title="Sign in">Sign in to continue</PageHeading>
    <p>{expired ? "Your session ended." : "This page needs a signed-in user."}</p>
    <p>
      <Link class="button primary" href={`/signin?next=${encodeURIComponent(path)}`}>
        Sign in
      </Link>
    </p>
  </>
)

const Header = () => {
  const { state, signOut } = useSession()
  const [open, setOpen] = useState(false)
  return (
    <header class="site-header">
      <div class="bar">
        <Link class="brand" href="/">
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <span>Hosting</span>
        </Link>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={open}
          aria-controls="site-nav"
          onClick={() => setOpen((v) => !v)}
        >
          Menu
        </button>
        <nav id="site-nav" aria-label="Main" class={open ? "open" : ""} onClick={() => setOpen(false)}>
          <ul>
            <li>
              <Link href="/">Catalog</Link>
            </li>
            {state.status === "signed-in" &&
              state.accounts.map((account) => (
                <li key={account.name}>
                  <Link href={pathOf("accounts", account.name)}>
                    <span class="visually-hidden">Account </span>
                    {account.name}
                  </Link>
                </li>
              ))}
            {state.status === "signed-in" && (
              <li>
                <Link href="/tokens">Tokens</Link>
              </li>
            )}
          </ul>
          <div class="who">
            {state.status === "signed-in" && (
              <>
                <span class="user" aria-label={`Signed in as ${state.session.user.name}`}>
                  {state.session.user.name}
                </span>
                <button
                  type="button"
                  class="link-button"
                  onClick={() => {
                    void signOut().finally(() => navigate("/"))
                  }}
                >
                  Sign out
                </button>
              </>
            )}
            {state.status === "signed-out" && <Link href="/signin">Sign in</Link>}
          </div>
        </nav>
      </div>
    </header>
  )
}

export const App = () => {
  const location = useLocation()
  const { state } = useSession()
  let page: ComponentChildren = <NotFound />
  for (const route of routes) {
    const params = match(route.pattern, location.path)
    if (params === undefined) continue
    if (route.private && state.status === "checking") page = <p role="status">Checking your session…</p>
    else if (route.private && state.status === "signed-out") page = <SignInFirst path={`${location.path}${window.location.search}`} expired={state.expired} />
    else page = route.render(params, location.query)
    break
  }
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Header />
      <main id="main" tabIndex={-1}>
        {page}
      </main>
      <footer class="site-footer">
        <p>
          Agent hosting service · <a href="/api/v1/docs">API reference</a>
        </p>
      </footer>
    </>
  )
}
