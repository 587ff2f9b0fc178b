/**
 * Closed pipes, with no dependency: the executable installs this before it
 * loads anything else.
 */

/**
 * Makes a reader that went away end the command quietly: `hosting me | head -1`
 * exits 0 once `head` has what it wanted, as `gh` does, instead of failing on
 * EPIPE. Nothing can be said on a closed stderr either, so its EPIPE is
 * ignored. Called once, by the executable.
 */
export const endQuietlyOnClosedPipes = () => {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    process.exit(0)
  })
  process.stderr.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
  })
}
