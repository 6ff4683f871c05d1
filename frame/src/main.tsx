/**
 * The frame's entry: the message inbox first (so nothing the host posts early is lost), then the
 * controller and the UI.
 */
import { drainInbox } from './inbox'
import { render } from 'preact'
import { FrameController } from './controller'
import { App } from './app'
import './styles.css'

const controller = new FrameController()

function mount() {
  const root = document.getElementById('svc-root')!
  render(<App controller={controller} />, root)
  controller.observeSize(root)
  drainInbox((event) => controller.receive(event))
}

// The script runs in <head>: the inbox listens from here on; the UI waits for the body.
if (document.readyState === 'loading') addEventListener('DOMContentLoaded', mount, { once: true })
else mount()
