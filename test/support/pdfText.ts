/**
 * The text a reader sees on a PDF's pages, read with PDF.js (through `unpdf`, pure JavaScript): only
 * the text drawn inside each page's box, so text that a printout cuts off at the page's edge does not
 * count, whatever the content stream still holds.
 */
import { getDocumentProxy } from 'unpdf'

/**
 * Reads the text inside the pages of a PDF, page after page, with whitespace collapsed to one space.
 *
 * @param pdf - The PDF's bytes, such as Chromium's `page.pdf()`.
 * @returns The text, and how many items fell outside a page (cut off in print).
 * @example
 * const { text } = await pdfText(await page.pdf({ format: 'A4' }))
 */
export async function pdfText(pdf: Uint8Array): Promise<{ text: string; cutOff: string[] }> {
  const document = await getDocumentProxy(new Uint8Array(pdf))
  const shown: string[] = []
  const cutOff: string[] = []
  for (let number = 1; number <= document.numPages; number++) {
    const page = await document.getPage(number)
    const [left, bottom, right, top] = page.view as [number, number, number, number]
    const content = await page.getTextContent()
    for (const item of content.items) {
      if (!('str' in item)) continue
      const x = item.transform[4] as number
      const y = item.transform[5] as number
      const inside = x >= left - 1 && x + item.width <= right + 1 && y >= bottom && y <= top
      ;(inside ? shown : cutOff).push(item.str)
      if (item.hasEOL) shown.push(' ')
    }
    shown.push(' ')
  }
  await document.destroy()
  const collapse = (text: string) => text.replace(/\s+/g, ' ').trim()
  return { text: collapse(shown.join(' ')), cutOff: cutOff.map(collapse).filter(Boolean) }
}
