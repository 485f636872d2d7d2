/**
 * The TypeScript code blocks of the README and the guides in docs/, in the order a reader meets them:
 * the README, then the guides by name.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

const root = join(import.meta.dirname, '../..')

/** One ```ts block. */
export type DocSnippet = {
  /** Where it is, such as `README.md line 73`. */
  where: string
  /** Its code, without the fences. */
  code: string
  /** Marked ```ts runnable: it runs as written against a devnet. */
  runnable: boolean
}

/**
 * Every ```ts block (```ts runnable included) of README.md and docs/*.md.
 *
 * @example
 * const runnable = (await docSnippets()).filter((snippet) => snippet.runnable)
 */
export async function docSnippets(): Promise<DocSnippet[]> {
  const documents = [
    'README.md',
    ...(await readdir(join(root, 'docs')))
      .filter((file) => file.endsWith('.md'))
      .sort()
      .map((file) => `docs/${file}`),
  ]
  const texts = await Promise.all(documents.map((file) => readFile(join(root, file), 'utf8')))
  return documents.flatMap((file, at) => {
    const text = texts[at] as string
    return [...text.matchAll(/^```ts( runnable)?\n([\s\S]*?)^```$/gm)].map((match) => ({
      where: `${file} line ${text.slice(0, match.index).split('\n').length}`,
      code: match[2] as string,
      runnable: match[1] !== undefined,
    }))
  })
}
