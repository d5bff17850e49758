/**
 * Error bodies and status lines. Every error answer carries the same JSON body,
 * {"error": {"code": "...", "message": "..."}}; the object API keeps the spec's status codes,
 * including its own 455 Length Mismatch and 456 MD5 Mismatch.
 */

export interface ErrorBody {
  error: { code: string; message: string };
}

export function errorBody(code: string, message: string): string {
  const body: ErrorBody = { error: { code, message } };
  return JSON.stringify(body);
}

/** Reason phrases as RFC 9110 names them, plus the object store's own 455 and 456. */
const REASONS: ReadonlyMap<number, string> = new Map([
  [200, 'OK'],
  [201, 'Created'],
  [202, 'Accepted'],
  [204, 'No Content'],
  [206, 'Partial Content'],
  [304, 'Not Modified'],
  [400, 'Bad Request'],
  [401, 'Unauthorized'],
  [403, 'Forbidden'],
  [404, 'Not Found'],
  [405, 'Method Not Allowed'],
  [408, 'Request Timeout'],
  [409, 'Conflict'],
  [411, 'Length Required'],
  [413, 'Content Too Large'],
  [415, 'Unsupported Media Type'],
  [416, 'Range Not Satisfiable'],
  [422, 'Unprocessable Content'],
  [431, 'Request Header Fields Too Large'],
  [455, 'Length Mismatch'],
  [456, 'MD5 Mismatch'],
  [500, 'Internal Server Error'],
  [501, 'Not Implemented'],
  [502, 'Bad Gateway'],
  [503, 'Service Unavailable'],
  [504, 'Gateway Timeout'],
  [507, 'Insufficient Storage'],
]);

/** '201 Created': the status line's code and reason. Throws a RangeError on a code not in the table. */
export function statusLine(code: number): string {
  const reason = REASONS.get(code);
  if (reason === undefined) throw new RangeError(`no status line for HTTP status ${String(code)}`);
  return `${code} ${reason}`;
}
