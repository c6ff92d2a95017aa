/** Talking to the Studio server: JSON in and out; every change carries the page's token. */
const token = document.querySelector<HTMLMetaElement>('meta[name="stepwise-token"]')?.content ?? '';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function answer<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!response.ok)
    throw new ApiError(response.status, body.error?.message ?? `${response.status} ${response.statusText}`);
  return body as T;
}

export const get = <T>(path: string): Promise<T> =>
  fetch(`/api/${path}`, { headers: { Accept: 'application/json' } }).then((r) => answer<T>(r));

export const post = <T>(path: string, body: unknown): Promise<T> =>
  fetch(`/api/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Stepwise-Token': token },
    body: JSON.stringify(body),
  }).then((r) => answer<T>(r));

/** `a/b` path segments, each encoded. */
export const path = (...segments: (string | number)[]) => segments.map((s) => encodeURIComponent(String(s))).join('/');
