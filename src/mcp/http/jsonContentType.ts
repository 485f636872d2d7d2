import { type HttpCheck, refuse } from './check.js'

/**
 * Refuses (415 `UNSUPPORTED_MEDIA_TYPE`) a body that is not declared `application/json` (with any
 * parameters, such as a charset).
 *
 * @example
 * jsonContentType({ method: 'POST', headers: new Headers({ 'content-type': 'text/plain' }), client }) // 415
 */
export const jsonContentType: HttpCheck = ({ headers }) =>
  headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() === 'application/json'
    ? undefined
    : refuse(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'Content-Type must be application/json: the body is one JSON-RPC message.',
      )
