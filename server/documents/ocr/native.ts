/**
 * The native Tesseract engine: the `tesseract` command (Debian's `tesseract-ocr`) when one is on
 * PATH with the English model, about twice as fast as the WebAssembly build on the same pages (see
 * tests/bench/ocr.bench.ts). One process per page, one thread each (OMP_THREAD_LIMIT=1), its TSV
 * output read back into the paragraphs the WebAssembly engine gives.
 */
/** A paragraph as Tesseract reports it (both engines give this shape). */
export interface TesseractParagraph { text: string; confidence: number; lines: { words: { text: string; confidence: number }[] }[] }

let found: string | null | undefined

/** The `tesseract` command when it is installed with the English model; null otherwise (checked once). */
export function nativeTesseract(): string | null {
  if (found !== undefined) return found
  found = null
  const bin = Bun.which('tesseract')
  if (bin) {
    try {
      const langs = Bun.spawnSync([bin, '--list-langs'], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, OMP_THREAD_LIMIT: '1' } })
      if (langs.exitCode === 0 && /^eng$/m.test(langs.stdout.toString())) found = bin
    } catch { /* not runnable */ }
  }
  return found
}

/**
 * Recognises one encoded image with the command; the paragraphs of its TSV output (word
 * confidences, paragraph confidence = their mean). Aborting kills the process.
 */
export async function recognizeNative(bin: string, image: Uint8Array, signal: AbortSignal): Promise<{ paragraphs: TesseractParagraph[] }[]> {
  const proc = Bun.spawn([bin, 'stdin', 'stdout', '-l', 'eng', '--psm', '3', 'tsv'], {
    stdin: 'pipe', stdout: 'pipe', stderr: 'ignore',
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
  })
  const kill = () => proc.kill('SIGKILL')
  signal.addEventListener('abort', kill, { once: true })
  try {
    proc.stdin.write(image)
    await proc.stdin.end()
    const [tsv, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    if (code !== 0) throw new Error(`tesseract exited with ${code}`)
    return parseTsv(tsv)
  } finally {
    signal.removeEventListener('abort', kill)
  }
}

/** Tesseract's TSV (level, page, block, paragraph, line, word, box, conf, text) as blocks of paragraphs. */
export function parseTsv(tsv: string): { paragraphs: TesseractParagraph[] }[] {
  const blocks = new Map<string, Map<string, Map<string, { text: string; confidence: number }[]>>>()
  for (const row of tsv.split('\n').slice(1)) {
    const f = row.split('\t')
    if (f.length < 12 || f[0] !== '5') continue // words only
    const text = f.slice(11).join('\t').trim()
    if (text === '') continue
    const block = blocks.get(f[2]!) ?? new Map()
    blocks.set(f[2]!, block)
    const par = block.get(f[3]!) ?? new Map()
    block.set(f[3]!, par)
    const line = par.get(f[4]!) ?? []
    par.set(f[4]!, line)
    line.push({ text, confidence: Math.max(0, Number(f[10])) })
  }
  return [...blocks.values()].map((pars) => ({
    paragraphs: [...pars.values()].map((lines) => {
      const all = [...lines.values()].flat()
      return {
        text: [...lines.values()].map((l) => l.map((w) => w.text).join(' ')).join('\n'),
        confidence: all.reduce((n, w) => n + w.confidence, 0) / Math.max(1, all.length),
        lines: [...lines.values()].map((words) => ({ words })),
      }
    }),
  }))
}
