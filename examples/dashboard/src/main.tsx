/** Starts the dashboard in the page. */
import { render } from "preact"
import { App } from "./App"
import { SessionProvider } from "./session"
import "./styles.css"

render(
  <SessionProvider>
    <App />
  </SessionProvider>,
  document.getElementById("app")!
)
