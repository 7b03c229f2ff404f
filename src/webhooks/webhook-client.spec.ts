import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  destinationOf,
  postWebhook,
  RESPONSE_READ_LIMIT,
  WebhookCallError,
} from './webhook-client.js';

describe(postWebhook.name, () => {
  let server: Server;
  let port: number;
  let handler: Parameters<typeof createServer>[1];
  const requests: { headers: Record<string, unknown>; body: string }[] = [];

  beforeEach(async () => {
    requests.length = 0;
    server = createServer((request, response) => handler?.(request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const post = (
    url: string,
    allowPrivateDestinations = true,
    signal = AbortSignal.timeout(2_000),
  ) =>
    postWebhook(
      { url, headers: { 'webhook-id': 'msg_1' }, body: '{"type":"registered"}' },
      { connectTimeoutMs: 1_000, allowPrivateDestinations, signal },
    );

  const failure = async (promise: Promise<number>): Promise<WebhookCallError> => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebhookCallError);
    return error as WebhookCallError;
  };

  it('should POST the body as JSON with its headers and resolve to the status', async () => {
    handler = (request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        requests.push({ headers: request.headers, body });
        response.writeHead(202).end('ok');
      });
    };

    expect(await post(`http://127.0.0.1:${port}/hooks?x=1`)).toBe(202);
    expect(requests).toEqual([
      {
        headers: expect.objectContaining({
          'webhook-id': 'msg_1',
          'content-type': 'application/json',
          'content-length': '21',
        }) as Record<string, unknown>,
        body: '{"type":"registered"}',
      },
    ]);
  });

  it('should not follow a redirect', async () => {
    handler = (_request, response) =>
      response.writeHead(301, { location: `http://127.0.0.1:${port}/elsewhere` }).end();

    expect(await post(`http://127.0.0.1:${port}/hooks`)).toBe(301);
  });

  it('should read at most a few KiB of an answer that never ends', async () => {
    handler = (_request, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(1024, 'a');
      const timer = setInterval(() => response.write(chunk), 5);
      response.on('close', () => clearInterval(timer));
    };

    expect(await post(`http://127.0.0.1:${port}/hooks`)).toBe(200);
    expect(RESPONSE_READ_LIMIT).toBe(4096);
  });

  it('should give up when the answer does not come before the signal', async () => {
    handler = () => undefined;

    const error = await failure(
      post(`http://127.0.0.1:${port}/hooks`, true, AbortSignal.timeout(200)),
    );
    expect([error.code, error.isRetryable]).toEqual(['ETIMEOUT', true]);
  });

  it('should report a refused connection as retryable', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const freePort = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');

    const error = await failure(post(`http://127.0.0.1:${freePort}/hooks`));
    expect([error.code, error.isRetryable]).toEqual(['ECONNREFUSED', true]);
  });

  it.each([
    ['a loopback literal', () => `http://127.0.0.1:${port}/hooks`],
    ['an IPv4-mapped loopback literal', () => `http://[::ffff:127.0.0.1]:${port}/hooks`],
    ['a name that resolves to loopback', () => `http://localhost:${port}/hooks`],
  ])('should refuse %s without the opt-in, before sending a byte', async (_name, url) => {
    handler = (_request, response) => {
      requests.push({ headers: {}, body: '' });
      response.writeHead(204).end();
    };

    const error = await failure(post(url(), false));
    expect([error.code, error.isRetryable]).toEqual(['EDESTINATION', false]);
    expect(requests).toEqual([]);
  });

  it('should refuse a private destination without the opt-in though the same URL was just sent to with it', async () => {
    // Not kept open: a kept connection is reused without a look-up, and this is about the guard.
    handler = (_request, response) => response.writeHead(204, { connection: 'close' }).end();

    expect(await post(`http://127.0.0.1:${port}/hooks`)).toBe(204);
    expect(await post(`http://localhost:${port}/hooks`)).toBe(204);

    for (const url of [`http://127.0.0.1:${port}/hooks`, `http://localhost:${port}/hooks`]) {
      const error = await failure(post(url, false));
      expect(error.code).toBe('EDESTINATION');
    }
  });

  it('should refuse what is not a URL, without retrying', async () => {
    const error = await failure(post('not a url'));
    expect([error.code, error.isRetryable]).toEqual(['EURL', false]);
  });
});

describe(destinationOf.name, () => {
  it('should take the parts a request needs from the URL', () => {
    expect(destinationOf('https://[::1]:8443/hooks/in?x=1#part')).toEqual({
      protocol: 'https:',
      host: '::1',
      isAddress: true,
      port: 8443,
      path: '/hooks/in?x=1',
      isHttps: true,
    });
    expect(destinationOf('http://example.com/')).toEqual({
      protocol: 'http:',
      host: 'example.com',
      isAddress: false,
      port: undefined,
      path: '/',
      isHttps: false,
    });
  });

  it('should parse a URL once and answer the same parts for it after', () => {
    const url = 'https://receiver.example/webhooks';

    expect(destinationOf(url)).toBe(destinationOf(url));
  });

  it('should answer null for what is not a URL', () => {
    expect(destinationOf('not a url')).toBeNull();
  });
});
