/**
 * The operator CLI as an entry point of its own in the compiled binary (scripts/build.ts): a
 * command run through `dist/svc` loads the CLI's code (about 1.6 MB) instead of parsing the
 * service's whole bundle (about 8 MB), which made a command about twice as slow as `bun run svc`.
 * From source, main.ts runs the CLI itself.
 */
import { runCli } from './cli'

process.exit(await runCli(process.argv.slice(2)))
