/**
 * The frame's state machine (spec: Embedded frame states, Frame messages). It receives host
 * messages, pins the host origin on the first well-formed svc:init, exchanges the handoff, loads
 * the case, and tells the host what happens: svc:ready, svc:session-expiring, svc:session-ended,
 * svc:navigate, svc:resize and svc:error. The UI renders its state and calls its reader actions.
 */
import { createParser } from 'eventsource-parser'
import { ApiError, createApi, exchange, SessionEnded, type Api } from './api'
import { checkView, INITIAL_VIEW, SVC_VERSION, viewMessage, type ErrorCode, type View } from './protocol'
import { applyTheme, INITIAL_THEME, themeVariables, type ThemeState } from './theme'
import { knownZone } from './format'

/** The five states of the frame. */
export type Phase = 'waiting' | 'no-handshake' | 'exchanging' | 'ready' | 'terminal'

/** Something loaded from the service. */
export type Loadable<T> = { status: 'loading' } | { status: 'ok'; value: T } | { status: 'failed' }

/** The parts of a case the frame shows (fields it does not know are ignored). */
export interface CaseEvent { id: string; event: string; data: string; at: number }
export interface Evaluation { answers: any[] | null; decision: any | null; evidence: any[] | null }

/** Everything the UI renders. */
export interface FrameState {
  phase: Phase
  view: View
  theme: ThemeState
  scenario: Loadable<any>
  documents: Loadable<any[]>
  blocks: Record<string, Loadable<any[]>>
  evaluation: Loadable<Evaluation>
  events: { status: 'idle' | 'open' | 'failed'; items: CaseEvent[] }
  /** The workspace's time zone (from the session exchange): every time shown is in it. */
  timeZone: string
}

/** Seconds of no handshake before the waiting frame says it was not opened from its host. */
export const NO_HANDSHAKE_MS = 10_000
/** How long before lapse the host is warned. */
export const EXPIRING_LEAD_MS = 60_000
/** Resize messages are at most this frequent. */
export const RESIZE_THROTTLE_MS = 100
/** Height ceiling reported to the host. */
export const HEIGHT_CEILING = 2400
/** Replies to unknown envelope versions before an origin is pinned. */
export const UNPINNED_VERSION_REPLIES = 3

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The controller of one frame document. */
export class FrameController {
  state: FrameState = {
    phase: 'waiting',
    view: INITIAL_VIEW,
    theme: INITIAL_THEME,
    scenario: { status: 'loading' },
    documents: { status: 'loading' },
    blocks: {},
    evaluation: { status: 'loading' },
    events: { status: 'idle', items: [] },
    timeZone: 'UTC',
  }
  private listeners = new Set<() => void>()
  private hostOrigin: string | null = null
  private versionReplies = 0
  private api: Api | null = null
  private scenarioId = ''
  private expiresAt = ''
  private timers: ReturnType<typeof setTimeout>[] = []
  private ended = false
  private readySent = false
  private expiringDue = false
  private expiringSent = false
  private navigation: Promise<void> = Promise.resolve()
  private eventsAbort: AbortController | null = null
  private evaluationRequested = false
  private lastHeight = -1
  private lastResizeAt = -Infinity
  private resizeTimer: ReturnType<typeof setTimeout> | null = null
  private pendingHeight = 0

  constructor() {
    this.timers.push(setTimeout(() => {
      if (this.state.phase === 'waiting') this.set({ phase: 'no-handshake' })
    }, NO_HANDSHAKE_MS))
    this.applyTheme()
  }

  /** Registers a re-render callback; returns its removal. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private set(patch: Partial<FrameState>) {
    this.state = { ...this.state, ...patch }
    for (const fn of this.listeners) fn()
  }

  private post(message: Record<string, unknown>) {
    if (this.hostOrigin) parent.postMessage({ svc: SVC_VERSION, ...message }, this.hostOrigin)
  }

  private error(code: ErrorCode, key?: string, to?: { source: MessageEventSource; origin: string }) {
    const message = { svc: SVC_VERSION, type: 'svc:error', code, ...(key !== undefined ? { key } : {}) }
    if (to) (to.source as Window).postMessage(message, to.origin)
    else if (this.hostOrigin) parent.postMessage(message, this.hostOrigin)
  }

  /** Handles one message event (the inbox hands over buffered ones first). */
  receive(event: MessageEvent): void {
    // Only the embedding page talks to the frame, and after pinning only from its origin.
    if (event.source !== parent || parent === window || event.origin === 'null') return
    if (this.hostOrigin !== null && event.origin !== this.hostOrigin) return
    const data = event.data
    if (!isObject(data) || !('svc' in data)) return
    if (data.svc !== SVC_VERSION) {
      if (this.hostOrigin !== null) this.error('unsupported_version')
      else if (this.versionReplies < UNPINNED_VERSION_REPLIES) {
        this.versionReplies++
        this.error('unsupported_version', undefined, { source: event.source!, origin: event.origin })
      }
      return
    }
    switch (data.type) {
      case 'svc:init': return this.onInit(data, event)
      case 'svc:theme': return this.onTheme(data)
      case 'svc:navigate': return this.onNavigate(data)
      default: return // an unknown type within a known version is ignored
    }
  }

  private onInit(data: Record<string, any>, event: MessageEvent) {
    if (this.hostOrigin !== null) return // a second svc:init is ignored
    if (typeof data.handoff !== 'string' || data.handoff === '') {
      this.error('invalid_message', undefined, { source: event.source!, origin: event.origin })
      return
    }
    this.hostOrigin = event.origin
    this.set({ phase: 'exchanging' })
    this.sendResize(this.pendingHeight, true)
    void this.start(data.handoff, event.origin)
  }

  private async start(handoff: string, hostOrigin: string) {
    const session = await exchange(handoff, hostOrigin)
    if (!session) return this.end()
    this.api = createApi(session.session, () => this.end())
    this.scenarioId = session.scenario_id
    this.expiresAt = session.expires_at
    const lapse = Date.now() + session.expires_in * 1000
    this.timers.push(setTimeout(() => this.expiring(), Math.max(0, lapse - EXPIRING_LEAD_MS - Date.now())))
    this.timers.push(setTimeout(() => this.end(), Math.max(0, lapse - Date.now())))
    const [scenario, documents] = await Promise.all([this.load(`scenarios/${this.scenarioId}`), this.loadDocuments()])
    if (this.ended) return
    this.set({ phase: 'ready', scenario, documents, timeZone: knownZone(session.time_zone) })
    this.readySent = true
    this.post({ type: 'svc:ready', scenarioId: this.scenarioId, expiresAt: this.expiresAt, view: viewMessage(this.state.view, this.scenarioId) })
    if (this.expiringDue) this.expiring()
  }

  private expiring() {
    if (this.ended || this.expiringSent) return
    if (!this.readySent) { this.expiringDue = true; return }
    this.expiringSent = true
    this.post({ type: 'svc:session-expiring', expiresAt: this.expiresAt })
  }

  /** Ends the session once: refusal, expiry or a 401. The host learns no reason. */
  end(): void {
    if (this.ended) return
    this.ended = true
    for (const t of this.timers) clearTimeout(t)
    this.api?.drop()
    this.api = null
    this.eventsAbort?.abort()
    this.set({ phase: 'terminal' })
    this.post({ type: 'svc:session-ended' })
  }

  private async load<T>(path: string): Promise<Loadable<T>> {
    try {
      return { status: 'ok', value: await this.api!.get<T>(path) }
    } catch {
      return { status: 'failed' }
    }
  }

  private async loadDocuments(): Promise<Loadable<any[]>> {
    const page = await this.load<{ items: any[] }>(`scenarios/${this.scenarioId}/documents?limit=200`)
    return page.status === 'ok' ? { status: 'ok', value: page.value.items } : { status: 'failed' }
  }

  // ---- theming ----

  private onTheme(data: Record<string, any>) {
    if (this.hostOrigin === null) return // ignored entirely before init
    const { state, errors } = applyTheme(this.state.theme, { mode: data.mode, tokens: data.tokens })
    for (const e of errors) this.error(e.code, e.key)
    if (state !== this.state.theme) {
      this.set({ theme: state })
      this.applyTheme()
    }
  }

  private applyTheme() {
    const root = document.documentElement
    for (const [name, value] of Object.entries(themeVariables(this.state.theme))) root.style.setProperty(name, value)
    root.dataset.mode = this.state.theme.mode
  }

  // ---- navigation ----

  private onNavigate(data: Record<string, any>) {
    if (!this.readySent || this.ended) return // ignored with no reply before svc:ready
    // One at a time, in arrival order: each is checked completely before it applies.
    this.navigation = this.navigation.then(() => this.navigateTo(data.view)).catch(() => {})
  }

  private async navigateTo(requested: unknown) {
    const checked = checkView(requested, this.scenarioId)
    if ('error' in checked) return this.error(checked.error)
    const view = checked.ok
    if (view.documentId !== null) {
      const known = await this.documentInCase(view.documentId)
      if (this.ended) return
      if (!known) return this.error('not_in_scope')
      if (view.blockId !== null) {
        const blocks = await this.ensureBlocks(view.documentId)
        if (this.ended) return
        if (blocks.status !== 'ok' || !blocks.value.some((b) => b.id === view.blockId)) return this.error('not_in_scope')
      }
    }
    this.show(view)
  }

  /** True when a document belongs to the bound case (a foreign and an absent one look alike). */
  private async documentInCase(documentId: string): Promise<boolean> {
    const docs = this.state.documents
    if (docs.status === 'ok' && docs.value.some((d) => d.id === documentId)) return true
    try {
      const doc = await this.api!.get(`scenarios/${this.scenarioId}/documents/${encodeURIComponent(documentId)}`)
      if (doc?.id !== documentId) return false
      const current = this.state.documents
      this.set({ documents: { status: 'ok', value: [doc, ...(current.status === 'ok' ? current.value : [])] } })
      return true
    } catch (e) {
      if (e instanceof SessionEnded || e instanceof ApiError) return false
      return false
    }
  }

  private show(view: View) {
    this.set({ view })
    if (view.documentId) void this.ensureBlocks(view.documentId)
    if (view.tab === 'evaluation') this.loadEvaluation()
    if (view.tab === 'activity') this.openEvents()
  }

  /** A reader action: shows the view and tells the host. */
  select(patch: Partial<View>): void {
    if (this.state.phase !== 'ready') return
    const next: View = { ...this.state.view, ...patch }
    if (next.tab !== 'documents') { next.documentId = null; next.blockId = null }
    if (next.documentId === null) next.blockId = null
    if (next.tab !== 'evaluation') next.factPath = null
    const v = this.state.view
    if (next.tab === v.tab && next.documentId === v.documentId && next.blockId === v.blockId && next.factPath === v.factPath && next.documentPane === v.documentPane) return
    this.show(next)
    this.post({ type: 'svc:navigate', view: viewMessage(next, this.scenarioId) })
  }

  /** Loads (once) the blocks of a document of the case. */
  async ensureBlocks(documentId: string): Promise<Loadable<any[]>> {
    const have = this.state.blocks[documentId]
    if (have && have.status !== 'failed') {
      if (have.status === 'ok') return have
    }
    this.set({ blocks: { ...this.state.blocks, [documentId]: { status: 'loading' } } })
    const items: any[] = []
    let result: Loadable<any[]> = { status: 'ok', value: items }
    let cursor: string | null = null
    try {
      do {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
        const page: { items: any[]; next_cursor?: string | null } = await this.api!.get(`scenarios/${this.scenarioId}/documents/${encodeURIComponent(documentId)}/blocks?limit=200${q}`)
        items.push(...page.items)
        cursor = page.next_cursor ?? null
      } while (cursor)
    } catch {
      result = { status: 'failed' }
    }
    this.set({ blocks: { ...this.state.blocks, [documentId]: result } })
    return result
  }

  /** Loads the latest evaluation's answers, decision and evidence (each may be absent). */
  loadEvaluation(): void {
    if (this.evaluationRequested || !this.api) return
    this.evaluationRequested = true
    const part = async (name: string) => {
      try {
        const r = await this.api!.get(`scenarios/${this.scenarioId}/${name}`)
        return r && Array.isArray(r.items) ? r.items : r
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null
        throw e
      }
    }
    Promise.all([part('answers'), part('decision'), part('evidence')])
      .then(([answers, decision, evidence]) => this.set({ evaluation: { status: 'ok', value: { answers, decision, evidence } } }))
      .catch(() => this.set({ evaluation: { status: 'failed' } }))
  }

  /** Opens (once) the case's event stream for the activity view. */
  openEvents(): void {
    if (this.eventsAbort || !this.api) return
    this.eventsAbort = new AbortController()
    const signal = this.eventsAbort.signal
    this.set({ events: { status: 'open', items: this.state.events.items } })
    const run = async () => {
      const res = await this.api!.stream(`scenarios/${this.scenarioId}/events`, signal)
      const parser = createParser({
        onEvent: (e) => {
          const item: CaseEvent = { id: e.id ?? '', event: e.event ?? 'message', data: e.data, at: Date.now() }
          this.set({ events: { status: 'open', items: [item, ...this.state.events.items].slice(0, 500) } })
        },
      })
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.feed(value)
      }
    }
    run().catch(() => {
      if (!signal.aborted) this.set({ events: { status: 'failed', items: this.state.events.items } })
    })
  }

  /** Downloads a document's original bytes through the session (a read; nothing changes). */
  async download(doc: { id: string; filename?: string }): Promise<void> {
    try {
      const blob = await this.api!.blob(`scenarios/${this.scenarioId}/documents/${encodeURIComponent(doc.id)}/download`)
      const url = URL.createObjectURL(blob)
      const a = document.createElement('a')
      a.href = url
      a.download = doc.filename ?? 'document'
      a.click()
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
    } catch { /* the session may have ended; the terminal state shows it */ }
  }

  // ---- size ----

  /** Reports the content height of `el` to the host as it changes. */
  observeSize(el: Element): void {
    new ResizeObserver(() => this.sendResize(Math.ceil(el.getBoundingClientRect().height))).observe(el)
  }

  private sendResize(height: number, force = false) {
    this.pendingHeight = height
    if (this.hostOrigin === null) return
    if (!force && height === this.lastHeight) return
    const wait = this.lastResizeAt + RESIZE_THROTTLE_MS - performance.now()
    if (wait > 0) {
      this.resizeTimer ??= setTimeout(() => { this.resizeTimer = null; this.sendResize(this.pendingHeight) }, wait)
      return
    }
    this.lastHeight = height
    this.lastResizeAt = performance.now()
    this.post({ type: 'svc:resize', height: Math.min(height, HEIGHT_CEILING), bounded: height > HEIGHT_CEILING })
  }
}
