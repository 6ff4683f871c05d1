/**
 * The benchmarks' baseline: a bare Bun.serve answering a fixed JSON body (BARE_BODY) with 201 to
 * POST and 200 otherwise. Prints its port on the first line.
 */
const body = process.env.BARE_BODY ?? '{}'
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false, // as the service's listener
  fetch: (req) => new Response(body, { status: req.method === 'POST' ? 201 : 200, headers: { 'content-type': 'application/json' } }),
})
console.log(server.port)
