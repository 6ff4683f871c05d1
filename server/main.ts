/**
 * Entry point of `bun run start` and of the compiled binary: the service (`--worker`: job runner
 * only), the operator CLI (`svc <command>`), or a document parser process (`--parse-worker`). Each
 * is imported only when chosen, so a CLI command or a parser process never loads the HTTP app, and
 * the service never loads the CLI.
 */
const [first] = process.argv.slice(2)
if (first === '--parse-worker') {
  // The compiled binary is also its own document parser process (see documents/parsing/parser-pool.ts).
  const { serveParseRequests } = await import('./documents/parsing/parser-process')
  serveParseRequests()
} else if (first !== undefined && !first.startsWith('--')) {
  // The compiled binary is also the operator CLI: `svc migrate`, `svc tenant create ...`.
  const { runCli } = await import('./cli')
  process.exit(await runCli(process.argv.slice(2)))
} else {
  const { start } = await import('./serve')
  await start()
}

export {}
