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
 * The recording as the bins carry it and the early handshake writes it: each result as its JSON text,
 * so that nothing is built or serialized before the first answers (about 8 ms of the start).
 */
export type HandshakeAnswers = {
  /** The `initialize` result's JSON for each supported protocol version, by that version. */
  initialize: Record<string, string>
  /** The `tools/list` result's JSON. */
  toolsList: string
}

/**
 * The recording the bins carry: the build replaces this module with one that returns it (see
 * tsup.config.ts), so that the stdio server answers the handshake before it loads the MCP SDK. Run
 * from source there is none, and the server starts whole.
 */
export function recordedHandshake(): HandshakeAnswers | undefined {
  return undefined
}
