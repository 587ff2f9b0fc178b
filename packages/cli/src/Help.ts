/**
 * The help @effect/cli prints, made to read like the rest of the CLI: plain
 * text when piped or with NO_COLOR, the usage with the command's full path,
 * no placeholder descriptions, no `--wizard`, the global options on every
 * command, and examples.
 */

/** Whether help may use colours: stdout is a terminal and NO_COLOR is not set (https://no-color.org). */
export const colors = (): boolean => process.stdout.isTTY === true && (process.env["NO_COLOR"] ?? "") === ""

const ansi = /\u001b\[[0-9;]*m/g

/** What @effect/cli says of a type before the option's own description. */
const typeDescriptions = new Set(["A user-defined piece of text.", "A true or false value.", "An integer."])

/** The options every command takes, as the root's help shows them. */
const globalOptions = `GLOBAL OPTIONS

--json
  Print machine-readable JSON on stdout

--profile text
  The profile to use (default "default", or $HOSTING_PROFILE)

--base-url text
  The API's base address (else $HOSTING_BASE_URL, else the profile's)

--token text
  A bearer token for this run (else $HOSTING_TOKEN, else the profile's)
`

/** Examples of each command, by its path after `hosting`. */
const examples: Record<string, ReadonlyArray<string>> = {
  "": ["hosting login --base-url https://hosting.example.com/api/v1", "hosting agents list", "hosting chat send dep-1 \"Hello\""],
  setup: ["hosting setup --code ABCDE-FGHIJ-KLMNO-PQRST --user alice", "hosting setup --code ABCDE-FGHIJ-KLMNO-PQRST --user alice --name Alice"],
  login: ["hosting login --base-url https://hosting.example.com/api/v1", "hosting login --profile work --base-url https://work.example.com"],
  logout: ["hosting logout", "hosting logout --profile work"],
  me: ["hosting me", "hosting me --json"],
  whoami: ["hosting whoami", "hosting whoami --profile work"],
  "accounts get": ["hosting accounts get acme", "hosting accounts get acme --json"],
  "accounts rename": ["hosting accounts rename acme acme-labs"],
  "accounts create": ["hosting accounts create acme-labs", "hosting accounts create acme-labs --json"],
  "accounts delete": ["hosting accounts delete acme-labs --yes"],
  "accounts members list": ["hosting accounts members list acme", "hosting accounts members list acme --json"],
  "accounts members set": ["hosting accounts members set acme bob --role admin", "hosting accounts members set acme carol --role member"],
  "accounts members remove": ["hosting accounts members remove acme bob"],
  "accounts invite": ["hosting accounts invite acme --role member", "hosting accounts invite acme --role admin --email carol@example.com"],
  "accounts invitations list": ["hosting accounts invitations list acme", "hosting accounts invitations list acme --json"],
  "accounts invitations withdraw": ["hosting accounts invitations withdraw acme <id>"],
  "accounts accept": ["hosting accounts accept https://hosting.example.com/invitations/<code>", "hosting accounts accept <code>"],
  "accounts audit": ["hosting accounts audit acme", "hosting accounts audit acme --limit 20 --offset 20"],
  "secrets set": ["hosting secrets set OPENAI_KEY --account acme < key.txt", "hosting secrets set TLS_KEY --from-file tls.key"],
  "secrets list": ["hosting secrets list", "hosting secrets list --account acme --json"],
  "secrets delete": ["hosting secrets delete OPENAI_KEY", "hosting secrets delete OPENAI_KEY --account acme"],
  "tokens create": ["hosting tokens create ci --scope read --account acme --expires-in-days 90", "hosting tokens create laptop"],
  "tokens list": ["hosting tokens list", "hosting tokens list --json"],
  "tokens revoke": ["hosting tokens revoke <id>"],
  "agents list": ["hosting agents list", "hosting agents list --query search --limit 10", "hosting agents list --json"],
  "agents get": ["hosting agents get acme/helper", "hosting agents get acme/helper --json"],
  "agents register": [
    "hosting agents register acme/helper --build-id b-1 --registry ghcr.io/acme --spec helper.yaml",
    "hosting agents register acme/helper --build-id b-2 --registry ghcr.io/acme --spec helper.yaml --readme README.md"
  ],
  "agents publish": ["hosting agents publish acme/helper@1.0.0 --build-id b-1", "hosting agents publish acme/helper@1.1.0 --build-id b-2"],
  "agents yank": ["hosting agents yank acme/helper@1.1.0 --reason \"leaks memory\""],
  "agents unyank": ["hosting agents unyank acme/helper@1.1.0"],
  "agents channels list": ["hosting agents channels list acme/helper", "hosting agents channels list acme/helper --json"],
  "agents channels set": ["hosting agents channels set acme/helper@1.0.0 stable", "hosting agents channels set acme/helper@1.1.0 beta"],
  "agents channels delete": ["hosting agents channels delete acme/helper beta"],
  "agents config": ["hosting agents config acme/helper", "hosting agents config acme/helper --json"],
  "deployments list": ["hosting deployments list acme", "hosting deployments list acme --status live --json", "hosting deployments list acme --limit 20 --offset 20"],
  "deployments history": ["hosting deployments history acme/helper", "hosting deployments history acme/helper --json"],
  "deployments create": [
    "hosting deployments create acme/helper@1.0.0",
    "hosting deployments create 'acme/helper@^1.2' --follow",
    "hosting deployments create acme/helper --env MODE=slow --env-secret API_KEY=OPENAI_KEY"
  ],
  "deployments get": ["hosting deployments get dep-1", "hosting deployments get dep-5f3a", "hosting deployments get acme/helper"],
  "deployments settings": ["hosting deployments settings dep-1", "hosting deployments settings dep-1 --concurrent-send queue"],
  "deployments rollback": ["hosting deployments rollback dep-7", "hosting deployments rollback dep-7 --to-version 1.0.0"],
  "deployments delete": ["hosting deployments delete dep-1", "hosting deployments delete dep-1 --json"],
  "deployments configmap": ["hosting deployments configmap acme-helper helper-env --account acme"],
  "deployments restart": ["hosting deployments restart acme-helper helper-0 --account acme"],
  "chat send": [
    "hosting chat send dep-1 \"Summarise the report\"",
    "hosting chat send dep-1 \"And the totals?\" --conversation <id>",
    "echo \"long text\" | hosting chat send dep-1 -"
  ],
  "chat list": ["hosting chat list dep-1", "hosting chat list dep-1 --json"],
  "chat history": ["hosting chat history dep-1 <conversation>", "hosting chat history dep-1 b56ac9b7"],
  "chat title": ["hosting chat title dep-1 b56ac9b7 \"Quarterly report\"", "hosting chat title dep-1 <conversation> \"Plans\" --json"],
  "chat cancel": ["hosting chat cancel dep-1 b56ac9b7", "hosting chat cancel dep-1 <conversation> --json"],
  "files upload": ["hosting files upload dep-1 report.csv", "hosting files upload dep-1 data.bin --name q3.bin --content-type application/octet-stream"],
  "files list": ["hosting files list dep-1", "hosting files list dep-1 --json"],
  "files download": ["hosting files download dep-1 report.csv", "hosting files download dep-1 <key> -o out.csv", "hosting files download dep-1 <key> -o -"],
  "traces list": ["hosting traces list acme/helper", "hosting traces list acme/helper --status error --start 2026-11-01T00:00:00Z --limit 5"],
  "events follow": ["hosting events follow acme", "hosting events follow acme --json", "hosting events follow acme --last-event-id 42"]
}

/** Removes a block of the help: its header line and everything indented or blank under it. */
const withoutBlock = (lines: Array<string>, header: (line: string) => boolean): Array<string> => {
  const kept: Array<string> = []
  let skipping = false
  for (const line of lines) {
    if (skipping && (line === "" || line.startsWith(" "))) continue
    skipping = header(line)
    if (!skipping) kept.push(line)
  }
  return kept
}

/**
 * Rewrites one help text of the command `path` (`["hosting", "chat",
 * "send"]`); anything that is not a help text is left as it is, but for the
 * colours.
 */
export const polish = (text: string, path: ReadonlyArray<string>, color = colors()): string => {
  const plain = text.replace(ansi, "")
  if (!/^USAGE$/m.test(plain)) return color ? text : plain
  let lines = plain.split("\n")
  // The type's own description says nothing the option's does not say better.
  lines = lines.filter((line, i) => !(typeDescriptions.has(line.trim()) && lines[i + 1]?.trim() === ""))
  lines = withoutBlock(lines, (line) => /^(\(-\w, )?--wizard\b/.test(line))
  const name = path[path.length - 1]!
  lines = lines.map((line) => (line.startsWith(`$ ${name}`) ? `$ ${path.join(" ")}${line.slice(2 + name.length)}` : line))
  let out = lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()
  if (path.length > 1) out += `\n\n${globalOptions}`
  const own = examples[path.slice(1).join(" ")]
  if (own !== undefined) out += `\nEXAMPLES\n\n${own.map((e) => `  $ ${e}`).join("\n")}\n`
  return color ? colorize(out) : out
}

/** A polished help text for a terminal: its headers in bold. */
export const colorize = (help: string): string => help.replace(/^([A-Z][A-Z ]+)$/gm, "\u001b[1m$1\u001b[0m")
