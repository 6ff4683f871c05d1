// The host side of the embed protocol, as a host platform should write it:
// - the handoff comes from the host's own backend (which authenticated the user, took the subject
//   from the host session, authorised the case and checked CSRF), or is pasted for a local try-out;
// - messages are posted only to the frame's origin, never to '*';
// - every received message is checked for origin AND source before it is read.
const $ = (id) => document.getElementById(id)
const frame = $('frame')
const log = $('log')
let frameOrigin = null

const service = $('service')
if (!service.value) service.value = location.origin

function record(text) {
  const li = document.createElement('li')
  li.textContent = text
  log.prepend(li)
}

/** Posts one protocol message to the frame, to its origin only. */
function send(message) {
  if (frameOrigin) frame.contentWindow.postMessage({ svc: 1, ...message }, frameOrigin)
}

addEventListener('message', (event) => {
  // Origin and source checks on every received message.
  if (event.origin !== frameOrigin || event.source !== frame.contentWindow) return
  const m = event.data
  if (!m || m.svc !== 1 || typeof m.type !== 'string') return
  record(JSON.stringify(m))
  switch (m.type) {
    case 'svc:resize': frame.style.height = `${Math.max(m.height, 120)}px`; break
    case 'svc:session-expiring': $('status').textContent = 'The case view closes soon; reopen it to continue.'; break
    case 'svc:session-ended': $('status').textContent = 'The case view has closed.'; break
  }
})

/** Asks this host's backend for a handoff (same-origin POST with the CSRF token). */
async function mintHandoff(caseId) {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content
  const res = await fetch('mint', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', ...(csrf ? { 'x-csrf-token': csrf } : {}) },
    body: JSON.stringify({ case_id: caseId }),
  })
  if (!res.ok) throw new Error(`the host backend refused to mint (${res.status})`)
  return (await res.json()).handoff
}

$('open').addEventListener('submit', async (e) => {
  e.preventDefault()
  $('status').textContent = ''
  let handoff = $('handoff').value.trim()
  $('handoff').value = '' // single use; do not keep it on the page
  try {
    if (!handoff) handoff = await mintHandoff($('case').value.trim())
  } catch (err) {
    $('status').textContent = `${err.message}. Paste a handoff minted with POST /v1/embed/handoffs instead.`
    return
  }
  const url = new URL(`/embed/${encodeURIComponent($('slug').value.trim())}`, service.value)
  frameOrigin = url.origin
  frame.hidden = false
  frame.addEventListener('load', () => send({ type: 'svc:init', handoff }), { once: true })
  frame.src = url.href
})

document.querySelectorAll('[data-mode]').forEach((b) => b.addEventListener('click', () => send({ type: 'svc:theme', mode: b.dataset.mode })))
document.querySelector('[data-brand]').addEventListener('click', () => send({ type: 'svc:theme', tokens: { accent: '#0b5d3b', 'accent-hover': '#08462c', 'accent-subtle': '#e3f4ec', 'accent-subtle-foreground': '#0b5d3b' } }))
document.querySelector('[data-reset]').addEventListener('click', () => send({ type: 'svc:theme', tokens: {} }))
