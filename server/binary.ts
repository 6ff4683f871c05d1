/**
 * Entry point of the compiled binary (scripts/build.ts), kept tiny: it loads the embedded entry
 * point of the role chosen, the operator CLI (`svc <command>`: cli-main.ts) or everything else
 * (the service, `--worker`, `--parse-worker`: main.ts), so a CLI command never parses the
 * service's bundle. Embedded entry points are named from the entry points' common folder
 * (`server/`), as `.js`; the names are built at run time so the bundler leaves them alone.
 */
const [first] = process.argv.slice(2)
const entry = first !== undefined && !first.startsWith('--') ? 'cli-main' : 'main'
await import(`/$bunfs/root/${entry}.js`)

export {}
