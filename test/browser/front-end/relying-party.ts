import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// An application on another origin that signs people in with Keygate as an OpenID provider,
// through oidc-client-ts (its browser build, as an application would load it) as a public client
// with PKCE: `/` starts the sign-in (window.startSignIn), `/callback` completes it and calls
// UserInfo with the access token (window.signInResult), `/frame` holds a page of Keygate in an
// iframe (window.framed names its address).

const LIBRARY_FILE = new URL(
  '../../../node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js',
  import.meta.url,
);

/** The UserManager of both pages; the client id is kept in sessionStorage between them. */
const SETTINGS = `
  function manager() {
    const settings = JSON.parse(sessionStorage.getItem('rp-settings'));
    return new oidc.UserManager({
      authority: settings.authority,
      client_id: settings.clientId,
      redirect_uri: location.origin + '/callback',
      response_type: 'code',
      scope: 'openid profile email',
      loadUserInfo: false,
    });
  }`;

const START_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Application</title>
<script src="/oidc-client-ts.js"></script>
<script>${SETTINGS}
  window.startSignIn = (authority, clientId) => {
    sessionStorage.setItem('rp-settings', JSON.stringify({ authority, clientId }));
    return manager().signinRedirect();
  };
</script></head><body><h1>Application</h1></body></html>`;

const CALLBACK_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Callback</title>
<script src="/oidc-client-ts.js"></script>
<script>${SETTINGS}
  (async () => {
    try {
      const mgr = manager();
      const user = await mgr.signinRedirectCallback();
      const endpoint = await mgr.metadataService.getUserInfoEndpoint();
      const answer = await fetch(endpoint, {
        headers: { authorization: 'Bearer ' + user.access_token },
      });
      window.signInResult = {
        profile: user.profile,
        idToken: user.id_token,
        userInfo: { status: answer.status, body: await answer.json() },
      };
    } catch (error) {
      window.signInResult = { error: String(error) };
    }
  })();
</script></head><body><h1>Callback</h1></body></html>`;

const FRAME_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Framing</title></head>
<body><h1>Framing</h1><iframe id="keygate" width="600" height="400"></iframe>
<script>
  const target = new URLSearchParams(location.search).get('src');
  document.getElementById('keygate').src = target;
</script></body></html>`;

export interface RelyingParty {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly redirectUri: string;
  close(): Promise<void>;
}

export async function serveRelyingParty(): Promise<RelyingParty> {
  const library = readFileSync(LIBRARY_FILE, 'utf8');
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const html = { 'content-type': 'text/html; charset=utf-8' };
    if (path === '/oidc-client-ts.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(library);
    } else if (path === '/callback') {
      response.writeHead(200, html).end(CALLBACK_PAGE);
    } else if (path === '/frame') {
      response.writeHead(200, html).end(FRAME_PAGE);
    } else {
      response.writeHead(200, html).end(START_PAGE);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    redirectUri: `${origin}/callback`,
    async close() {
      server.close();
      await once(server, 'close');
    },
  };
}
