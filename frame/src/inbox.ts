/**
 * The frame's first listener: installed when the script starts, before anything renders, so a
 * message the host posts early is kept and handled once the controller is ready to read it.
 */

type Handler = (event: MessageEvent) => void

const queue: MessageEvent[] = []
let handler: Handler | null = null

addEventListener('message', (event) => {
  if (handler) handler(event)
  else queue.push(event)
})

/** Routes every message (first the buffered ones, in order) to `next`. */
export function drainInbox(next: Handler): void {
  handler = next
  for (const event of queue.splice(0)) next(event)
}
