/**
 * The Hono merchant of examples/hono-merchant.ts, served by Node through @hono/node-server, with
 * `process.env` as its environment.
 *
 *   VAULT_CHAIN=base-sepolia BASE_SEPOLIA_RPC_URL=… MERCHANT_PRIVATE_KEY=0x… X402_FACILITATOR_URL=… \
 *     npx tsx examples/hono-node.ts
 */
import { serve } from '@hono/node-server'
import merchant, { paywallOf } from './hono-merchant.js'

// Built before listening, so that a configuration error stops the process at start.
await paywallOf(process.env)
const server = serve(
  {
    fetch: (request) => merchant.fetch(request, process.env),
    port: Number(process.env.PORT ?? 3000),
  },
  ({ port }) => console.log(`listening on http://localhost:${port}`),
)

const shutdown = async () => {
  server.close()
  await (await paywallOf(process.env)).close() // waits for a sweep in flight
  console.log('closed')
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
