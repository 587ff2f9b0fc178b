/**
 * The answers `hosting` gives without loading its commands: the help of a
 * command and the completion scripts, read from `help.json` beside the
 * built modules. The build renders that file from the command tree itself
 * (HelpPages.ts), so there is one source of the commands; run from source,
 * or with the file missing, every command line goes the full way.
 */
import { readFileSync } from "node:fs"
import * as Help from "./Help.js"

/** What `help.json` holds: the help of each command by its path after `hosting` ("" for the root), and each shell's script. */
export interface Pages {
  readonly help: Readonly<Record<string, string>>
  readonly completions: Readonly<Record<string, string>>
}

/** Where the build writes the pages: beside this module. */
export const file = new URL("./help.json", import.meta.url)

/** The pages of the build, or undefined when there are none (a run from source). */
export const load = (): Pages | undefined => {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Pages
  } catch {
    return undefined
  }
}

/**
 * What a command line (the arguments after the executable) prints when it
 * asks only for a command's help (`chat send --help`) or a completion script
 * (`--completions zsh`) that the pages hold; undefined for anything else.
 */
export const answer = (args: ReadonlyArray<string>, pages: () => Pages | undefined = load): string | undefined => {
  const pick = (record: Readonly<Record<string, string>> | undefined, key: string) =>
    record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined
  if (args.length === 2 && args[0] === "--completions") return pick(pages()?.completions, args[1]!)
  const last = args[args.length - 1]
  if (last !== "--help" && last !== "-h") return undefined
  const words = args.slice(0, -1)
  if (words.some((word) => word.startsWith("-"))) return undefined
  const page = pick(pages()?.help, words.join(" "))
  if (page === undefined) return undefined
  return Help.colors() ? Help.colorize(page) : page
}
