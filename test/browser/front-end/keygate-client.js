/* global fetch, localStorage, navigator -- a module of the browser page */
// Keygate from a single-page app: the access token in memory, the refresh token in localStorage
// (shared by the tabs of the origin), one refresh at a time across tabs, refresh and retry once
// when Keygate says the access token is no good.

const REFRESH_TOKEN_KEY = 'keygate.refreshToken';

export function createKeygateClient(baseUrl) {
  let accessToken = null;

  function keep(pair) {
    accessToken = pair.accessToken;
    localStorage.setItem(REFRESH_TOKEN_KEY, pair.refreshToken);
    return pair;
  }

  async function send(path, { method = 'GET', body, headers = {} } = {}) {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(accessToken === null ? {} : { Authorization: `Bearer ${accessToken}` }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, response, body: await response.json() };
  }

  /**
   * A refresh token works once, so the tabs take turns: inside the lock, each uses the newest
   * refresh token (another tab may have just replaced it) and stores its successor before the
   * next tab starts. Two tabs refreshing one token would look like theft to Keygate.
   */
  function refresh() {
    return navigator.locks.request('keygate-refresh', async () => {
      const refreshToken = localStorage.getItem(REFRESH_TOKEN_KEY);
      if (refreshToken === null) {
        return false;
      }
      const answer = await send('/api/auth/refresh', { method: 'POST', body: { refreshToken } });
      if (answer.status !== 200) {
        localStorage.removeItem(REFRESH_TOKEN_KEY);
        return false;
      }
      keep(answer.body);
      return true;
    });
  }

  /** Calls the API; on the bearer guard's 401, refreshes once and retries once. */
  async function request(path, init) {
    const answer = await send(path, init);
    const challenged = answer.response.headers.get('WWW-Authenticate')?.startsWith('Bearer');
    if (answer.status !== 401 || !challenged || !(await refresh())) {
      return answer;
    }
    return send(path, init);
  }

  return {
    async register(username, email, password) {
      const answer = await send('/api/auth/register', {
        method: 'POST',
        body: { username, email, password },
      });
      return answer.status === 201 ? keep(answer.body) : answer;
    },
    async login(email, password) {
      const answer = await send('/api/auth/login', { method: 'POST', body: { email, password } });
      return answer.status === 200 ? keep(answer.body) : answer;
    },
    async logout() {
      const refreshToken = localStorage.getItem(REFRESH_TOKEN_KEY);
      const answer = await request('/api/auth/revoke', { method: 'POST', body: { refreshToken } });
      accessToken = null;
      localStorage.removeItem(REFRESH_TOKEN_KEY);
      return answer;
    },
    refresh,
    request,
  };
}
