/**
 * Skipped tests say why on their own `(skip)` line. Bun prints a skipped test as `(skip) <block> >
 * <title>` and nothing else (a console line about it lands anywhere among a parallel run's output),
 * so the reason goes into the title of the test or block that is skipped: `<title> [skipped: <why>]`.
 * Where it runs, the title is unchanged.
 */

/** Why a test that needs PostgreSQL is skipped: set when DATABASE_URL is not (the embedded run). */
export const NEEDS_POSTGRES = process.env.DATABASE_URL ? undefined : 'needs PostgreSQL (DATABASE_URL); the embedded database is one session of one process'

/**
 * The title of a test or block that is skipped for `why` (the first reason that holds; undefined or
 * false: it runs), with the reason appended when skipped.
 */
export function skipTitle(title: string, ...why: Array<string | false | undefined>): string {
  const reason = why.find((w): w is string => typeof w === 'string' && w.length > 0)
  return reason ? `${title} [skipped: ${reason}]` : title
}
