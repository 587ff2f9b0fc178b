/**
 * Checks a command line against the command tree before @effect/cli parses
 * it, so that the mistakes a person makes most (a misspelt command or
 * option, a value that is not one of the choices) are reported at the level
 * where they were typed, naming what was wrong and the nearest that exists.
 */
import type { Command } from "@effect/cli"
import { CliFailure, usage } from "./ExitCode.js"

/** An option as the check sees it: its names, whether it takes a value, and its choices if it has some. */
interface OptionInfo {
  readonly names: ReadonlyArray<string>
  readonly valued: boolean
  readonly choices: ReadonlyArray<string> | undefined
  readonly integer: boolean
}

/** A command of the tree: its full path, its own options and its subcommands. */
export interface Node {
  readonly path: ReadonlyArray<string>
  readonly options: ReadonlyArray<OptionInfo>
  readonly children: ReadonlyMap<string, Node>
}

// The tree is read from @effect/cli's descriptors, whose shapes (`_tag`, `options`, `children`, `primitiveType`) are
// internal: they are read here only, and pinned by the version of @effect/cli this package is tested with.
type Internal = { readonly _tag: string; readonly [key: string]: any }

const optionsOf = (options: Internal, into: Array<OptionInfo>): Array<OptionInfo> => {
  switch (options._tag) {
    case "Single": {
      const primitive = options["primitiveType"] as Internal
      into.push({
        names: [options["fullName"], ...(options["aliases"] as ReadonlyArray<string>).map((a) => (a.length === 1 ? `-${a}` : `--${a}`))],
        valued: primitive._tag !== "Bool",
        choices: primitive._tag === "Choice" ? (primitive["alternatives"] as ReadonlyArray<[string, unknown]>).map(([c]) => c) : undefined,
        integer: primitive._tag === "Integer"
      })
      return into
    }
    case "KeyValueMap":
    case "Variadic":
      return optionsOf(options["argumentOption"], into)
    case "Map":
    case "WithFallback":
    case "WithDefault":
      return optionsOf(options["options"], into)
    case "Both":
    case "OrElse":
      return optionsOf(options["right"], optionsOf(options["left"], into))
    default:
      return into
  }
}

const nodeOf = (descriptor: Internal, parent: ReadonlyArray<string>): Node => {
  switch (descriptor._tag) {
    case "Map":
      return nodeOf(descriptor["command"], parent)
    case "Subcommands": {
      const own = nodeOf(descriptor["parent"], parent)
      const children = new Map<string, Node>()
      for (const child of descriptor["children"] as ReadonlyArray<Internal>) {
        const node = nodeOf(child, own.path)
        children.set(node.path[node.path.length - 1]!, node)
      }
      return { ...own, children }
    }
    case "Standard":
      return { path: [...parent, descriptor["name"]], options: optionsOf(descriptor["options"], []), children: new Map() }
    default:
      return { path: [...parent, descriptor["name"]], options: [], children: new Map() }
  }
}

/** The tree of a command and its subcommands. */
export const tree = (command: Command.Command<any, any, any, any>): Node => nodeOf(command.descriptor as unknown as Internal, [])

/** The options @effect/cli adds to every command. */
const builtIns: ReadonlyArray<OptionInfo> = [
  { names: ["--help", "-h"], valued: false, choices: undefined, integer: false },
  { names: ["--version"], valued: false, choices: undefined, integer: false },
  { names: ["--wizard"], valued: false, choices: undefined, integer: false },
  { names: ["--completions"], valued: true, choices: ["sh", "bash", "fish", "zsh"], integer: false },
  { names: ["--log-level"], valued: true, choices: undefined, integer: false }
]

/** The edit distance of two words (insertions, deletions, substitutions). */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** The candidate nearest to `typed`, if one is near enough to be what was meant. */
export const nearest = (typed: string, candidates: Iterable<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = candidate.startsWith(typed) && typed.replace(/^-+/, "").length >= 2 ? 0.5 : distance(typed, candidate)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(1, Math.min(2, Math.floor(typed.length / 3))) ? best : undefined
}

const failure = (error: string, details: string, hint?: string) =>
  new CliFailure({ exitCode: usage, error, details, ...(hint === undefined ? {} : { hint }) })

const name = (node: Node) => node.path.join(" ")

/**
 * The first mistake of a command line (the arguments after the executable),
 * or undefined when the tree finds none; @effect/cli then parses and checks
 * what is left (required arguments, values of arguments).
 */
export const check = (root: Node, args: ReadonlyArray<string>): CliFailure | undefined => {
  let node = root
  let positional = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") break
    if (arg.startsWith("-") && arg !== "-" && !/^-\d/.test(arg)) {
      const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined]
      // The root's options are the global ones, which may stand anywhere.
      const known = node === root ? [...root.options, ...builtIns] : [...node.options, ...root.options, ...builtIns]
      const option = known.find((o) => o.names.includes(flag))
      if (option === undefined) {
        const suggestion = nearest(flag, known.flatMap((o) => o.names.filter((n) => n.startsWith("--"))))
        return failure(
          "unknown_option",
          `unknown option ${flag} for "${name(node)}"${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
          `see \`${name(node)} --help\` for its options`
        )
      }
      if (!option.valued) continue
      const value = inline ?? args[++i]
      if (value === undefined) return failure("missing_value", `${flag} needs a value`)
      if (option.choices !== undefined && !option.choices.includes(value)) {
        const suggestion = nearest(value, option.choices)
        return failure(
          "invalid_value",
          `${flag} must be one of ${option.choices.join(", ")}, not "${value}"${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`
        )
      }
      if (option.integer && !/^-?\d+$/.test(value)) return failure("invalid_value", `${flag} must be a whole number, not "${value}"`)
      continue
    }
    if (node.children.size > 0 && !positional) {
      const child = node.children.get(arg)
      if (child !== undefined) {
        node = child
        continue
      }
      const names = [...node.children.keys()]
      const suggestion = nearest(arg, names)
      return failure(
        "unknown_command",
        `unknown command "${arg}" for "${name(node)}"${suggestion === undefined ? "" : `; did you mean "${suggestion}"?`}`,
        `the commands of ${name(node)} are ${names.join(", ")}`
      )
    }
    positional = true
  }
  return undefined
}

/** The full name of the command a command line names (`hosting chat send`), as far as it names one. */
export const pathOf = (root: Node, args: ReadonlyArray<string>): string => {
  let node = root
  for (const arg of args) {
    if (arg === "--") break
    const child = node.children.get(arg)
    if (child !== undefined) node = child
  }
  return name(node)
}

/**
 * The long options of the tree that take a value of no fixed choices
 * (`--limit`, `--profile`), for completion scripts that must know an
 * option takes one; a name that is a flag anywhere is left out.
 */
export const valuedNames = (root: Node): ReadonlySet<string> => {
  const valued = new Set<string>()
  const flags = new Set<string>()
  const visit = (node: Node) => {
    for (const option of node.options) {
      for (const name of option.names.filter((n) => n.startsWith("--"))) {
        if (option.valued && option.choices === undefined) valued.add(name)
        else flags.add(name)
      }
    }
    for (const child of node.children.values()) visit(child)
  }
  visit(root)
  return new Set([...valued].filter((name) => !flags.has(name)))
}
