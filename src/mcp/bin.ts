#!/usr/bin/env node
import { runStdioServer } from './stdio.js'

process.exitCode = await runStdioServer(process.env)
