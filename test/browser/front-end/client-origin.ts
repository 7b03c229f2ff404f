import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A front end's origin for the browser proofs of @keygate/client: the package's built module
// (`npm run client:build`, which `npm run test:browser` runs first), the example page of its
// README and docs/web-front-ends.md, a page that signs in through Keygate's providers
// (`/federation/`), and a bare page that only loads the module.

const CLIENT_FILE = new URL('../../../packages/client/dist/keygate-client.js', import.meta.url);
const EXAMPLE_FILE = new URL('../../../packages/client/example/index.html', import.meta.url);
/** A page with "Continue with …" buttons that completes the flow it comes back to. */
const FEDERATION_FILE = new URL('./federation.html', import.meta.url);
/** The address the example page shows, replaced by the test's own Keygate when served. */
export const EXAMPLE_KEYGATE_URL = 'https://id.example.com';

/** A page that loads the client module and hands it to the code a test evaluates. */
const HARNESS = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Harness</title>
<script type="module">
  import * as keygate from './keygate-client.js';
  globalThis.keygateModule = keygate;
</script></head><body></body></html>`;

export interface ClientOrigin {
  /** `http://127.0.0.1:<port>`: the harness at `/`, the example at `/example/`, `/federation/`. */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves the front end; `keygateUrl` is the service the example page is to call. */
export async function serveClientOrigin(keygateUrl: () => string): Promise<ClientOrigin> {
  if (!existsSync(CLIENT_FILE)) {
    throw new Error('packages/client/dist is missing: run `npm run client:build`');
  }
  const client = readFileSync(CLIENT_FILE, 'utf8');
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path.endsWith('/keygate-client.js')) {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(client);
    } else if (path === '/example/') {
      const page = readFileSync(EXAMPLE_FILE, 'utf8').replace(EXAMPLE_KEYGATE_URL, keygateUrl());
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    } else if (path === '/federation/') {
      const page = readFileSync(FEDERATION_FILE, 'utf8').replace(EXAMPLE_KEYGATE_URL, keygateUrl());
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    } else {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HARNESS);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.close();
      await once(server, 'close');
    },
  };
}
