// The programmatic MCP server (`x402-vault/mcp`) arrives with the MCP issue; the entry point exists
// so the package's exports map is complete from the first release.
export {}
