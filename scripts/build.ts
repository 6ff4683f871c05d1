export {}
/**
 * `bun run build`: one self-contained executable (dist/svc) with the service, the operator CLI,
 * the migrations and static assets inside. `dist/svc` serves; `dist/svc --worker` runs jobs only;
 * `dist/svc migrate|tenant|user|api-key ...` is the CLI.
 */
const result = await Bun.build({
  // The OCR thread is its own entry point: worker threads of a compiled binary load embedded entries.
  entrypoints: ['server/main.ts', 'server/documents/ocr/tesseract-thread.ts'],
  compile: { outfile: 'dist/svc' },
  minify: true,
  // Source maps (about 31 MB beside the binary) only when asked: a deployment does not need them.
  sourcemap: process.env.SVC_BUILD_SOURCEMAP === '1' ? 'linked' : 'none',
  target: 'bun',
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log(JSON.stringify({ built: 'dist/svc' }))
