/**
 * A local HTTPS webhook sink in its own process for deliveries.bench.ts (so the receiver's TLS work
 * does not share the measured process): answers 204 to every request on 127.0.0.2 and prints its
 * port, then the test PKI's CA file, on stdout. SINK_DELAY_MS holds each answer that long, as a
 * peer across a network would (0, the default, answers at once).
 */
import { startReceiver, testPki } from '../helpers/https-receiver'

const receiver = await startReceiver({ host: '127.0.0.2' })
const delayMs = Number(process.env.SINK_DELAY_MS ?? 0)
receiver.respond(() => (delayMs > 0 ? { status: 204, delayMs } : { status: 204 }))
console.log(`${receiver.port} ${testPki().caFile}`)
// Keep only a count, not every request body, during long runs.
setInterval(() => { receiver.requests.length = 0 }, 1000)
