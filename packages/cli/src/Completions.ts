/**
 * The completion scripts @effect/cli generates (`hosting --completions
 * bash|zsh|fish`), repaired: bash reaches the leaves, knows the global
 * options there and offers an option's choices one by one; zsh knows which
 * options take a value, offers the global options and arguments at the
 * leaves; no shell offers the hidden `--wizard`.
 */

const globals = ["--json", "--profile", "--base-url", "--token"]

/**
 * The bash script names a nested command `hosting__agents__list` but matches
 * `hosting,agents,list)` against `${cmd},${word}`, which is
 * `hosting__agents,list`: its case labels are rewritten to match.
 */
const bash = (script: string): string =>
  script
    .replace(/^(\s+)(hosting(?:,[\w-]+)+)\)$/gm, (_, indent: string, label: string) => {
      const words = label.split(",")
      return `${indent}${words.slice(0, -1).join("__")},${words[words.length - 1]})`
    })
    // Choices are given to compgen -W joined by commas, which it takes for one word.
    .replace(/compgen -W "([\w-]+(?:,[\w-]+)+)"/g, (_, choices: string) => `compgen -W "${choices.split(",").join(" ")}"`)
    .replace(/^(\s+opts=")(.*)"$/gm, (_, start: string, opts: string) => {
      const words = opts.split(" ").filter((w) => w !== "--wizard")
      return `${start}${[...words, ...globals.filter((g) => !words.includes(g))].join(" ")}"`
    })

/** The root's lines of the global options (the first `_arguments` block has them), for the other blocks. */
const zshGlobals = (script: string): Array<string> =>
  script.split("\n").filter((line) => globals.some((g) => line.trimStart().startsWith(`'${g}[`))).map((line) => line.trim().replace(/ \\$/, ""))

/**
 * The zsh script gives every option as a flag (`'--limit[…]'`), so that zsh
 * takes `--limit 5` for a flag and an argument; gives the global options at
 * the root only; and gives the leaves no arguments, so that nothing
 * completes after `hosting traces list acme/helper`. `valued` are the
 * options that take a value of no fixed choices.
 */
const zsh = (script: string, valued: ReadonlySet<string>): string => {
  const withValues = script
    .replace(/^\s+'--wizard\[[^\n]*\n/gm, "")
    .replace(/^(\s+)'(--[\w-]+)(\[.*\])' \\$/gm, (line, indent: string, name: string, description: string) =>
      valued.has(name) ? `${indent}'${name}${description}:VALUE: ' \\` : line)
  const globalLines = zshGlobals(withValues)
  return withValues.replace(/^(\s+)_arguments "\$\{_arguments_options\[@\]\}" \\\n([\s\S]*?)^(\s+)&& ret=0$/gm,
    (block, indent: string, body: string, end: string) => {
      if (body.includes("'--json[")) return block
      const inner = `${indent}    `
      const leaf = !body.includes("_commands\"")
      const added = [...globalLines, ...(leaf ? ["'*:argument:_default'"] : [])].map((line) => `${inner}${line} \\\n`).join("")
      // Before the subcommands' lines, if any: `_arguments` wants options first.
      const at = body.indexOf(`${inner}":: :`)
      const merged = at === -1 ? body + added : body.slice(0, at) + added + body.slice(at)
      return `${indent}_arguments "\${_arguments_options[@]}" \\\n${merged}${end}&& ret=0`
    })
}

/** Repairs a completion script; any other text is left as it is. `valued`: the options that take a free value. */
export const repair = (text: string, valued: ReadonlySet<string> = new Set()): string => {
  if (text.startsWith("function _hosting_bash_completions")) return bash(text)
  if (text.startsWith("#compdef hosting")) return zsh(text, valued)
  if (/^complete -c hosting /m.test(text)) return text.replace(/^complete -c hosting [^\n]* -l wizard [^\n]*\n/gm, "")
  return text
}
