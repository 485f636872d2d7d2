import { type HttpCheck, refuse } from './check.js'

/**
 * Refuses (406 `NOT_ACCEPTABLE`) an `Accept` that does not allow JSON, the one form this server
 * answers in: every answer is a single JSON body, since no tool sends anything before its result. No
 * `Accept` at all passes.
 *
 * @example
 * acceptsJson({ method: 'POST', headers: new Headers({ accept: 'text/html' }), client }) // 406
 */
export const acceptsJson: HttpCheck = ({ headers }) =>
  allowsJson(headers.get('accept'))
    ? undefined
    : refuse(
        406,
        'NOT_ACCEPTABLE',
        'This server answers with JSON: Accept must allow application/json (as application/json, application/* or */*), or be left out.',
      )

function allowsJson(accept: string | null): boolean {
  if (accept === null || accept.trim() === '') return true
  return accept.split(',').some((part) => {
    const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase())
    const refused = parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter))
    return !refused && ['application/json', 'application/*', '*/*'].includes(type)
  })
}
