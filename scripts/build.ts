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
  sourcemap: 'linked',
  target: 'bun',
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log(JSON.stringify({ built: 'dist/svc' }))
