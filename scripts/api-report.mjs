#!/usr/bin/env node
// The API report of every entry point: API Extractor reads each entry point's declarations and writes
// one `api/<entry>.api.md` per entry point of package.json.
//
//   npm run api:check    (node scripts/api-report.mjs) fails when a report differs from the committed one
//   npm run api:update   writes the reports (node scripts/api-report.mjs --update)
//
// The declarations are TypeScript 7's, emitted here from the sources without a type check (`tsc`
// checks them, in `npm test` beside this), into a temporary folder: about 4 s of CPU, where the
// shipped bundles of them (`dist/**/*.d.ts`, from `npm run build`) take a type check of most of a minute.
// They declare the same API: tsup's bundles are TypeScript 5.9's declarations of the same sources,
// rolled up one file per entry. (TypeScript 7 writes string literals in single quotes and sorts the
// members of a union; the reports show its spelling.)
//
// A changed report is a changed public surface: review the diff, and commit it when it is intended.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const update = process.argv.includes('--update')
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const reportFolder = join(root, 'api')
const tempFolder = join(root, 'node_modules/.cache/api-report')
// Outside node_modules, where API Extractor would take the declarations for another package's.
const declarationFolder = mkdtempSync(join(tmpdir(), 'x402-vault-api-declarations-'))

/** `x402-vault` for `.`, `x402-vault.express` for `./express`, … */
const reportName = (subpath) =>
  subpath === '.' ? packageJson.name : `${packageJson.name}.${subpath.slice(2)}`

// Each entry's ESM types (`import.types`, `./dist/<path>.d.ts`), whose source is `src/<path>.ts`: its
// CommonJS types (`require.types`, `.d.cts`) are the same declarations, built from the same sources.
const entries = Object.entries(packageJson.exports)
  .filter(([, target]) => typeof target === 'object' && target.import?.types)
  .map(([subpath, target]) => {
    const path = target.import.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '')
    return {
      name: reportName(subpath),
      source: join(root, 'src', `${path}.ts`),
      types: join(declarationFolder, `${path}.d.ts`),
    }
  })

emitDeclarations(entries.map((entry) => entry.source))

const silent = { logLevel: 'none' }
/** API Extractor's own lines that this script replaces with one summary saying what to do. */
const quiet = ['console-preamble', 'console-api-report-not-copied', 'console-api-report-copied']
const failing = { logLevel: 'error' }

let changed = 0
let failed = 0
/** Types a signature names that its own entry point does not export: `{ entry, name }`. */
const forgotten = []
const configs = entries.map((entry) => ({ entry, config: extractorConfig(entry) }))
// One TypeScript program for every entry point: each would otherwise load viem's and the other
// packages' declarations again.
const compilerState = CompilerState.create(configs[0].config, {
  additionalEntryPoints: entries.map((entry) => entry.types),
})
for (const { entry, config } of configs) {
  const result = Extractor.invoke(config, {
    compilerState,
    localBuild: update,
    printApiReportDiff: !update,
    messageCallback: (message) => {
      // The "report changed" warning is summarised below, with what to do about it.
      if (quiet.includes(message.messageId)) message.logLevel = 'none'
      // A type from another entry point (`VaultClient` in `x402-vault/express`) is public there.
      const name = /The symbol "([^"]+)"/.exec(message.text)?.[1]
      if (message.messageId === 'ae-forgotten-export' && name) {
        forgotten.push({ entry: entry.name, name, where: message.sourceFilePath })
        message.logLevel = 'none'
        message.handled = true
      }
    },
  })
  if (result.apiReportChanged) changed++
  if (result.errorCount > 0) failed++
}
rmSync(tempFolder, { recursive: true, force: true })

const exported = exportedNames(
  compilerState.program,
  entries.map((entry) => entry.types),
)
rmSync(declarationFolder, { recursive: true, force: true })
for (const { entry, name, where } of forgotten) {
  if (exported.has(name)) continue
  console.error(
    `api-report: ${entry} names the type ${name} (${relative(root, where ?? '')}), which no entry point exports.`,
  )
  failed++
}

if (failed > 0) {
  console.error('api-report: the API report failed; see the errors above.')
  process.exit(1)
}
if (changed > 0 && !update) {
  console.error(
    `api-report: the public API differs from the committed report in api/ (${changed} entry point(s)).\n` +
      'If the change is intended, run `npm run api:update`, review the diff of api/ and commit it.',
  )
  process.exit(1)
}
console.log(
  update
    ? `api-report: wrote ${entries.length} reports to api/ (${changed} changed).`
    : `api-report: ${entries.length} entry points match api/.`,
)

/** API Extractor's settings for one entry point: its report, the checks, the messages kept. */
function extractorConfig(entry) {
  return ExtractorConfig.prepare({
    configObjectFullPath: join(root, 'api/api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
    configObject: {
      projectFolder: root,
      newlineKind: 'lf',
      mainEntryPointFilePath: entry.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2023', 'DOM'],
            types: ['node'],
            strict: true,
            skipLibCheck: true,
          },
          files: [entry.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.name,
        reportFolder,
        reportTempFolder: tempFolder,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: failing },
        extractorMessageReporting: {
          default: { logLevel: 'warning', addToApiReportFile: true },
          // Every public name says what it is without release tags: all of it is public.
          'ae-missing-release-tag': silent,
          // Such a warning would name a line of a hashed chunk in dist/: every edit would change it.
          'ae-undocumented': silent,
          // A public signature that names a type no entry point exports fails the check (below).
          'ae-forgotten-export': failing,
        },
        // The JSDoc is written for editors (`@throws {VaultError}` and the like), not for TSDoc.
        tsdocMessageReporting: { default: silent },
      },
    },
  })
}

/**
 * The names the entry points' declarations export, all together, read from the program the reports
 * were made from (it holds every entry point).
 */
function exportedNames(program, files) {
  const checker = program.getTypeChecker()
  const names = new Set()
  for (const file of files) {
    const source = program.getSourceFile(file)
    const module = source && checker.getSymbolAtLocation(source)
    for (const symbol of module ? checker.getExportsOfModule(module) : []) names.add(symbol.name)
  }
  return names
}

/**
 * Emits the declarations of `sources` and of everything they import from `src/`, with tsconfig.json's
 * options, into `declarationFolder` (mirroring `src/`): TypeScript 7 (the type check's compiler), given
 * a tsconfig of its own that extends the repository's. Unchecked (`noCheck`), about 4 s of CPU where
 * TypeScript 5.9's emit took 22 s on the 2-core dev machine. Its tsconfig sits in the repository, where
 * the `types` it names resolve. Exits on an error that stops the emit.
 */
function emitDeclarations(sources) {
  mkdirSync(tempFolder, { recursive: true })
  const configPath = join(tempFolder, 'tsconfig.declarations.json')
  writeFileSync(
    configPath,
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        noCheck: true,
        rootDir: join(root, 'src'),
        declarationDir: declarationFolder,
      },
      include: [],
      files: sources,
    }),
  )
  const tsc = join(root, 'node_modules/typescript7/bin/tsc')
  const emit = spawnSync(process.execPath, [tsc, '-p', configPath, '--singleThreaded'], {
    encoding: 'utf8',
  })
  if (emit.status !== 0) {
    console.error(`${emit.stdout ?? ''}${emit.stderr ?? ''}${emit.error?.message ?? ''}`)
    console.error('api-report: the declarations could not be emitted.')
    rmSync(declarationFolder, { recursive: true, force: true })
    process.exit(1)
  }
}
