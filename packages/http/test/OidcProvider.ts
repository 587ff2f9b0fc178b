/**
 * A real OpenID provider for tests (`oidc-provider`, a certified
 * implementation) on loopback, and a browser-less walk through its sign-in
 * with the development login and consent forms: enough for the
 * authorization code flow with PKCE as a browser would run it.
 *
 * The provider listens first (its issuer is needed to configure the server
 * under test); its client is registered once the server's callback URL is
 * known (`register`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"

/** A person the provider knows, by the login typed in its form. */
export interface Person {
  readonly sub: string
  readonly email?: string
  readonly name?: string
  readonly preferred_username?: string
}

export interface TestProvider {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Registers the client with its redirect URI (the server's `/api/v1/oidc/callback`). */
  readonly register: (redirectUri: string) => void
  readonly close: () => Promise<void>
}

export const start = async (people: Record<string, Person>): Promise<TestProvider> => {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined
  const server: Server = createServer((req, res) => {
    if (handler === undefined) {
      res.writeHead(503).end("not ready")
      return
    }
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clientId = "hosting-test"
  const clientSecret = `secret-${globalThis.crypto.randomUUID()}`
  return {
    issuer,
    clientId,
    clientSecret,
    register: (redirectUri) => {
      const provider = new Provider(issuer, {
        clients: [{
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [redirectUri],
          grant_types: ["authorization_code"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_basic"
        }],
        claims: { openid: ["sub"], email: ["email"], profile: ["name", "preferred_username"] },
        // The ID token carries the profile and email claims itself (no userinfo call needed).
        conformIdTokenClaims: false,
        cookies: { keys: ["test-key-that-is-long-enough-for-signing"] },
        findAccount: (_ctx, sub) => {
          const person = Object.values(people).find((p) => p.sub === sub) ?? people[sub]
          if (person === undefined) return undefined
          return { accountId: person.sub, claims: () => ({ ...person }) }
        }
      })
      // The development forms submit the typed login as the account id: map a login to its person's sub.
      provider.on("server_error", (_ctx, error) => console.error("oidc-provider:", error))
      handler = provider.callback()
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Cookies by name, sent back to any path under theirs (one host: loopback). */
export class CookieJar {
  private readonly cookies = new Map<string, { readonly value: string; readonly path: string }>()

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";").map((part) => part.trim())
      const at = pair!.indexOf("=")
      const name = pair!.slice(0, at)
      const value = pair!.slice(at + 1)
      const path = attributes.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) ?? "/"
      const gone = attributes.some((a) => /^max-age=0$/i.test(a)) || value === ""
      if (gone) this.cookies.delete(name)
      else this.cookies.set(name, { value, path })
    }
  }

  header(url: URL): string {
    return [...this.cookies.entries()]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ")
  }

  get(name: string): string | undefined {
    return this.cookies.get(name)?.value
  }
}

/** A request with the jar's cookies, taking what it sets; redirects are not followed. */
export const visit = async (jar: CookieJar, url: string, init: RequestInit = {}) => {
  const target = new URL(url)
  const response = await fetch(target, {
    ...init,
    redirect: "manual",
    headers: { ...(init.headers as Record<string, string> | undefined), cookie: jar.header(target) }
  })
  jar.take(response)
  return { response, text: await response.text(), url: target }
}

/**
 * Walks a sign-in from the server's `/oidc/login` to its callback page, as a
 * browser would: follows redirects, fills the login form with `login`, and
 * approves the consent form. Answers the callback's response and text.
 */
export const signInThrough = async (jar: CookieJar, loginUrl: string, login: string) => {
  let next: string | undefined = loginUrl
  for (let step = 0; step < 20 && next !== undefined; step++) {
    const { response, text, url } = await visit(jar, next)
    if (url.pathname.endsWith("/oidc/callback")) return { response, text }
    const location = response.headers.get("location")
    if (location !== null) {
      next = new URL(location, url).href
      continue
    }
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(text)
    if (form === null) throw new Error(`sign-in stuck at ${url.href} (${response.status}): ${text.slice(0, 300)}`)
    const action = new URL(form[1]!.replace(/&amp;/g, "&"), url).href
    const prompt = /name="prompt" value="([^"]+)"/.exec(text)?.[1] ?? "consent"
    const body = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt })
    const submitted = await visit(jar, action, {
      method: "POST",
      body,
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    const moved = submitted.response.headers.get("location")
    if (moved === null) throw new Error(`the ${prompt} form answered ${submitted.response.status}: ${submitted.text.slice(0, 300)}`)
    next = new URL(moved, action).href
  }
  throw new Error("sign-in did not reach the callback within 20 steps")
}
