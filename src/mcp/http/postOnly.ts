import { type HttpCheck, refuse } from './check.js'

/**
 * Refuses (405 `METHOD_NOT_ALLOWED`, with `Allow: POST`) any method but POST: a stateless server has
 * no event stream to GET and no session to DELETE.
 *
 * @example
 * postOnly({ method: 'GET', headers, client }) // 405
 */
export const postOnly: HttpCheck = ({ method }) =>
  method === 'POST'
    ? undefined
    : refuse(
        405,
        'METHOD_NOT_ALLOWED',
        `Method ${method} is not served: this stateless server answers POST only (no SSE stream to GET, no session to DELETE).`,
        { headers: { allow: 'POST' } },
      )
