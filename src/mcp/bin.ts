#!/usr/bin/env node
process.stderr.write('x402-vault-mcp is not available in this release yet.\n')
process.exitCode = 1
