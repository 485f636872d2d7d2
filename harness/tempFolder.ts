import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// In a global registry: the set-up file that removes them (`isolateFiles.ts`) and the test files load
// this module separately (each file loads this repository's modules afresh).
const registryKey = Symbol.for('x402-vault.test.tempFolders')
const globals = globalThis as { [registryKey]?: Set<string> }
globals[registryKey] ??= new Set()
const folders: Set<string> = globals[registryKey]

/**
 * Makes a new folder under the system's temporary folder, removed once the test file has run (by the
 * set-up's `afterAll`, after the file's own).
 *
 * @param prefix - The start of its name, such as `x402-vault-addresses-`.
 * @returns Its path.
 * @example
 * const file = join(await tempFolder('x402-vault-mcp-'), 'addresses.json')
 */
export async function tempFolder(prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix))
  folders.add(folder)
  return folder
}

/** Removes every folder {@link tempFolder} made so far. */
export async function removeTempFolders(): Promise<void> {
  const removing = [...folders]
  folders.clear()
  await Promise.all(removing.map((folder) => rm(folder, { recursive: true, force: true })))
}
