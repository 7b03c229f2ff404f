export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON; throws when it is not JSON. */
  json<T = Record<string, unknown>>(): T;
}

/** Sends a request to `baseUrl` + `path` and reads the whole body as text before it returns. */
export async function httpRequest(
  baseUrl: string,
  path: string,
  init?: RequestInit,
): Promise<TestResponse> {
  const response = await fetch(`${baseUrl}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: <T>() => JSON.parse(text) as T,
  };
}
