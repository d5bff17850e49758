/**
 * The UI's one way to the management API. Same origin, so the store's Origin rule lets it in
 * (protocols/objstore/origin.ts); every state-changing request sends a JSON body with
 * `Content-Type: application/json`, the only type that rule accepts. A refusal becomes an
 * ApiError carrying the server's `{"error": {code, message}}`, so pages show the store's own words.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  /** The endpoint exists in the spec but not in this version of the server (501). */
  get notAvailable(): boolean {
    return this.status === 501;
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: 'application/json' } };
  if (method !== 'GET') {
    init.headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body ?? {});
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, 'UNREACHABLE', `the store did not answer: ${(err as Error).message}`);
  }
  const text = await res.text();
  let value: unknown = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: reported below */
  }
  if (!res.ok) {
    const e = (value as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? `${method} ${path} answered ${res.status}`);
  }
  return value as T;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body?: unknown) => call<T>('POST', path, body),
  put: <T>(path: string, body?: unknown) => call<T>('PUT', path, body),
  del: <T>(path: string) => call<T>('DELETE', path),
};
