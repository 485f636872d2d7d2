/**
 * Compiles the devnet's Solidity sources offline with the npm `solc` package and writes the committed,
 * generated `src/devnet/artifacts/` folder: one module per contract and an index. Run with
 * `npm run compile:contracts`.
 */
import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import solc from 'solc'

/** Compiler settings; changing any of them changes the bytecode, so they live in one place. */
export const compilerSettings = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  // No metadata hash or CBOR trailer: the bytecode then depends only on the sources and these settings,
  // never on the machine or the checkout path.
  metadata: { bytecodeHash: 'none', appendCBOR: false },
  outputSelection: {
    '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] },
  },
} as const

/** The folder holding the `.sol` sources. */
export const contractsDirectory = fileURLToPath(new URL('./contracts/', import.meta.url))
/** The generated folder. */
export const artifactsDirectory = fileURLToPath(new URL('./artifacts/', import.meta.url))

/** One compiled, deployable contract. */
export type CompiledContract = {
  contractName: string
  /** Source unit name, relative to the contracts folder (e.g. `VaultRouter.sol`). */
  sourceName: string
  abi: readonly unknown[]
  bytecode: `0x${string}`
  deployedBytecode: `0x${string}`
}

type SolcMessage = { severity: 'error' | 'warning' | 'info'; formattedMessage: string }
type SolcContractOutput = {
  abi: unknown[]
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } }
}
type SolcOutput = {
  errors?: SolcMessage[]
  contracts?: Record<string, Record<string, SolcContractOutput>>
}

const require = createRequire(import.meta.url)

/**
 * Compiles every `.sol` file under `src/devnet/contracts` (imports of `@openzeppelin/...` resolve to
 * node_modules).
 *
 * @returns The deployable contracts (non-empty bytecode, from this project's sources), sorted by name, and
 *   the compiler warnings.
 * @throws When solc reports an error, or two contracts share a name.
 * @example
 * const { contracts } = await compileSources()
 * contracts.map((contract) => contract.contractName) // ['FeeCollector', 'MockAToken', ...]
 */
export async function compileSources(): Promise<{
  contracts: CompiledContract[]
  warnings: string[]
}> {
  const files = await listSolidityFiles(contractsDirectory)
  const sources: Record<string, { content: string }> = {}
  for (const file of files) {
    const sourceName = relative(contractsDirectory, file).split(sep).join('/')
    sources[sourceName] = { content: await readFile(file, 'utf8') }
  }

  const input = { language: 'Solidity', sources, settings: compilerSettings }
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), { import: resolveImport }),
  ) as SolcOutput

  const messages = output.errors ?? []
  const errors = messages.filter((message) => message.severity === 'error')
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((message) => message.formattedMessage).join('\n')}`)
  }
  const warnings = messages
    .filter((message) => message.severity === 'warning')
    .map((message) => message.formattedMessage)

  const contracts: CompiledContract[] = []
  for (const sourceName of Object.keys(sources)) {
    for (const [contractName, compiled] of Object.entries(output.contracts?.[sourceName] ?? {})) {
      // Interfaces and abstract contracts have no bytecode: nothing to deploy.
      if (!compiled.evm.bytecode.object) continue
      if (contracts.some((contract) => contract.contractName === contractName)) {
        throw new Error(`Two contracts are named ${contractName}; artifact names must be unique.`)
      }
      contracts.push({
        contractName,
        sourceName,
        abi: compiled.abi,
        bytecode: `0x${compiled.evm.bytecode.object}`,
        deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
      })
    }
  }
  contracts.sort((a, b) => (a.contractName < b.contractName ? -1 : 1))
  return { contracts, warnings }
}

/**
 * Compiles the sources and renders the generated artifact files. Pure apart from reading the sources, so
 * a test can compare them with the committed folder.
 *
 * @returns File name → text, for every file of `src/devnet/artifacts/`.
 * @example
 * const files = await compileContracts()
 * files.get('VaultRouter.ts') // "// This file is generated … export const VaultRouterArtifact = { … }"
 */
export async function compileContracts(): Promise<Map<string, string>> {
  const { contracts } = await compileSources()
  return renderArtifacts(contracts)
}

/**
 * Renders one module per contract (`<Name>.ts`, exporting `<Name>Artifact`) and an `index.ts` that
 * re-exports them. The ABI is `as const` so viem infers function names, arguments and return types; it
 * is written one item per line so a diff shows which function or error changed.
 *
 * @param contracts - The compiled contracts, in the order to export them.
 * @returns File name → text.
 */
export function renderArtifacts(contracts: readonly CompiledContract[]): Map<string, string> {
  const settings = `optimizer ${compilerSettings.optimizer.runs} runs, evmVersion ${compilerSettings.evmVersion}`
  const header = (sources: string) => [
    '// This file is generated by `npm run compile:contracts` (src/devnet/compile.ts). Do not edit it.',
    `// Source: ${sources}, compiled with solc ${solc.version()} (${settings}).`,
    '',
  ]
  const files = new Map<string, string>()
  for (const contract of contracts) {
    const abi = contract.abi.map((item) => `    ${JSON.stringify(item)},`)
    const lines = [
      ...header(`src/devnet/contracts/${contract.sourceName}`),
      `/** Compiled \`${contract.contractName}\` from \`src/devnet/contracts/${contract.sourceName}\`. */`,
      `export const ${contract.contractName}Artifact = {`,
      `  contractName: '${contract.contractName}',`,
      '  abi: [',
      ...abi,
      '  ],',
      `  bytecode: '${contract.bytecode}',`,
      `  deployedBytecode: '${contract.deployedBytecode}',`,
      '} as const',
      '',
    ]
    files.set(`${contract.contractName}.ts`, lines.join('\n'))
  }
  const index = [
    ...header('src/devnet/contracts/**/*.sol'),
    ...contracts.map(
      (contract) =>
        `export { ${contract.contractName}Artifact } from './${contract.contractName}.js'`,
    ),
    '',
  ]
  files.set('index.ts', index.join('\n'))
  return files
}

/**
 * Compiles and rewrites `src/devnet/artifacts/` (removing files of contracts that no longer exist),
 * printing solc's warnings.
 *
 * @returns The folder written.
 */
export async function writeArtifacts(): Promise<string> {
  const { contracts, warnings } = await compileSources()
  for (const warning of warnings) console.warn(warning)
  const files = renderArtifacts(contracts)
  await rm(artifactsDirectory, { recursive: true, force: true })
  await mkdir(artifactsDirectory, { recursive: true })
  for (const [name, text] of files) await writeFile(join(artifactsDirectory, name), text)
  return artifactsDirectory
}

async function listSolidityFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true })
  const files: string[] = []
  for (const entry of entries) {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) files.push(...(await listSolidityFiles(path)))
    else if (entry.name.endsWith('.sol')) files.push(path)
  }
  return files.sort()
}

/** solc's import callback (synchronous): `@openzeppelin/...` comes from node_modules. */
function resolveImport(path: string): { contents: string } | { error: string } {
  if (!path.startsWith('@openzeppelin/')) return { error: `Unknown import: ${path}` }
  try {
    const [scope, name, ...rest] = path.split('/')
    const packageRoot = dirname(require.resolve(`${scope}/${name}/package.json`))
    return { contents: readFileSync(join(packageRoot, ...rest), 'utf8') }
  } catch (cause) {
    return { error: `Cannot read ${path}: ${(cause as Error).message}` }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeArtifacts().then(
    (path) => console.log(`Wrote ${relative(process.cwd(), path)}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error)
      process.exitCode = 1
    },
  )
}
