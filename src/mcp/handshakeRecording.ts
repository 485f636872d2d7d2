/**
 * What the MCP server answers to a 2025-era handshake (`initialize`, then `tools/list`), recorded from
 * the server itself (see `recordHandshake`). None of it depends on the configuration: the listing and
 * the server's identity are fixed at build time.
 */
export type HandshakeRecording = {
  /** The `initialize` result for each protocol version the server supports, by that version. */
  initialize: Record<string, Record<string, unknown>>
  /** The `tools/list` result, the same for every one of those versions. */
  toolsList: Record<string, unknown>
}

/**
 * The recording the bins carry: the build replaces this module with one that returns it (see
 * tsup.config.ts), so that the stdio server answers the handshake before it loads the MCP SDK. Run
 * from source there is none, and the server starts whole.
 */
export function recordedHandshake(): HandshakeRecording | undefined {
  return undefined
}
