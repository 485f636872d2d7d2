/**
 * A rule is written where it is enforced, in a sentence a reader can check, and a reference points at a
 * file of this repository: the product and protocol specs and the issue tracker the project was built
 * from are not in it, so a test, a comment or a bench row that names one of them tells the next
 * engineer nothing.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const folders = ['src', 'test', 'bench', 'harness', 'scripts']
const textFile = /\.(ts|mts|cts|js|mjs|cjs|sol|md|json)$/
const skipped = new Set(['node_modules', 'dist', 'artifacts'])

/** Every text file under `folder`, as paths from the repository's root. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && textFile.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((path) => !path.split('/').some((part) => skipped.has(part)))
}

/**
 * Names of documents outside the repository, and numbers of the tracker's issues (written as the word
 * issue and a number, or a number in parentheses).
 */
const outsideReference = new RegExp(
  [
    ['PRODUCT', 'PROTOCOL', 'X402'].map((name) => `\\b${name}\\.md`).join('|'),
    '\\bissue #\\d+',
    '\\(#\\d+\\)',
    '\\bof #\\d+',
  ].join('|'),
)

describe('references', () => {
  it('name only files of this repository: no spec section or issue number in src/, test/, bench/, harness/ or scripts/', () => {
    const found: string[] = []
    for (const path of folders.flatMap(filesUnder)) {
      readFileSync(join(root, path), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          const match = outsideReference.exec(line)
          if (match) found.push(`${path}:${index + 1}: ${match[0]}`)
        })
    }
    expect(found).toEqual([])
  })
})
