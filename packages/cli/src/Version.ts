/**
 * The version of `hosting`, in a module of its own so that `hosting
 * --version` loads nothing else.
 */

/** The version `hosting --version` prints (the package's). */
export const version = "0.1.0"
