/**
 * The documents tab: the case's document list and a viewer with a pages pane (blocks laid out
 * page by page) and a text pane (the whole text), highlighting the block in view.
 */
import { useEffect, useRef } from 'preact/hooks'
import type { FrameController } from '../controller'
import { coverage, label, size, tone, when } from '../format'

/** The list, or the viewer of the open document. */
export function DocumentsView({ controller }: { controller: FrameController }) {
  const s = controller.state
  if (s.documents.status === 'loading') return <p class="muted">Loading documents…</p>
  if (s.documents.status === 'failed') return <p class="muted">The documents could not be loaded.</p>
  const docs = s.documents.value
  const open = s.view.documentId ? docs.find((d) => d.id === s.view.documentId) : undefined
  if (open) return <Viewer controller={controller} doc={open} />
  if (docs.length === 0) return <p class="muted" data-empty="documents">No documents yet.</p>
  return (
    <ul class="list" data-list="documents">
      {docs.map((d) => (
        <li key={d.id}>
          <button type="button" class="row" data-document={d.id} onClick={() => controller.select({ documentId: d.id, blockId: null })}>
            <span class="name">{d.filename ?? d.id}</span>
            <span class={`badge ${tone(d.status)}`}>{label(d.status)}</span>
            <span class="small coverage" data-coverage={d.id}>{coverage(d)}</span>
            <span class="muted small" data-when={d.id}>{[size(d.size_bytes), when(d.created_at, s.timeZone)].filter(Boolean).join(' · ')}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}

function Viewer({ controller, doc }: { controller: FrameController; doc: any }) {
  const s = controller.state
  const blocks = s.blocks[doc.id]
  const pane = s.view.documentPane
  const highlighted = useRef<HTMLElement | null>(null)
  useEffect(() => {
    highlighted.current?.scrollIntoView({ block: 'center' })
  }, [s.view.blockId, pane, blocks?.status])
  const ref = (b: any) => (el: HTMLElement | null) => { if (b.id === s.view.blockId) highlighted.current = el }
  const pages = new Map<number, any[]>()
  if (blocks?.status === 'ok') for (const b of blocks.value) pages.set(b.page ?? 1, [...(pages.get(b.page ?? 1) ?? []), b])
  return (
    <section class="viewer" data-viewer={doc.id}>
      <div class="viewer-bar">
        <button type="button" class="link" data-action="close" onClick={() => controller.select({ documentId: null })}>← All documents</button>
        <strong class="name">{doc.filename ?? doc.id}</strong>
        <span class={`badge ${tone(doc.status)}`}>{label(doc.status)}</span>
        <span class="spacer" />
        <div class="seg" role="group" aria-label="Pane">
          <button type="button" class={pane === 'pages' ? 'on' : ''} data-pane="pages" onClick={() => controller.select({ documentPane: 'pages' })}>Pages</button>
          <button type="button" class={pane === 'text' ? 'on' : ''} data-pane="text" onClick={() => controller.select({ documentPane: 'text' })}>Text</button>
        </div>
        <button type="button" class="link" data-action="download" onClick={() => void controller.download(doc)}>Download</button>
      </div>
      {!blocks || blocks.status === 'loading' ? <p class="muted">Loading…</p> : null}
      {blocks?.status === 'failed' ? <p class="muted">The content of this document is not available.</p> : null}
      {blocks?.status === 'ok' && blocks.value.length === 0 ? <p class="muted">No readable content.</p> : null}
      {blocks?.status === 'ok' && pane === 'pages'
        ? [...pages].map(([page, items]) => (
          <article class="page" key={page} data-page={page}>
            <p class="muted small">Page {page}</p>
            {items.map((b) => (
              <p key={b.id} ref={ref(b)} data-block={b.id} class={`block ${b.kind ?? ''}${b.id === s.view.blockId ? ' hl' : ''}`}>{b.text}</p>
            ))}
          </article>
        ))
        : null}
      {blocks?.status === 'ok' && pane === 'text'
        ? <div class="text">{blocks.value.map((b) => <span key={b.id} ref={ref(b)} data-block={b.id} class={b.id === s.view.blockId ? 'hl' : ''}>{b.text}{'\n\n'}</span>)}</div>
        : null}
    </section>
  )
}
