import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { tempFolder } from '../../harness/tempFolder.js'

/**
 * The environment that makes tsx run a script of this repository the way a reader's app runs it:
 * `x402-vault` is then the package itself (its `exports`, the built `dist/`), not the sources that
 * the repository's tsconfig maps it to. A tsconfig of its own, with no such mapping, does that. It
 * also saves each run the compiling of the sources through tsx: a script that imports the SDK and the
 * Express plugin took 3.4 s of CPU against the sources and 1.6 s against `dist/` on the 2-core dev
 * machine.
 *
 * @returns `{ TSX_TSCONFIG_PATH }`, to add to the script's environment.
 * @example
 * await execFile(tsx, ['examples/sweep.ts'], { env: { ...env, ...(await tsxAsInstalled()) } })
 */
export async function tsxAsInstalled(): Promise<{ TSX_TSCONFIG_PATH: string }> {
  const file = join(await tempFolder('x402-vault-tsconfig-'), 'tsconfig.json')
  await writeFile(file, '{}')
  return { TSX_TSCONFIG_PATH: file }
}
