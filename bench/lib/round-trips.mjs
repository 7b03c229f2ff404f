// Round trips to PostgreSQL per request: a loopback relay in front of the server that reads the
// frontend side of the wire protocol and counts the messages after which a client waits for the
// server: Sync (the end of an extended-protocol query: Parse/Bind/Execute) and Query (a simple
// query, as BEGIN and COMMIT are sent). A relay adds latency and CPU, so it is used only for the
// short, sequential counting phase, never for the throughput figures.
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { request } from 'node:http';
import { createConnection, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'

/** Starts a relay to `target` ({ host, port }); returns { port, count(), reset(), close() }. */
export async function startRoundTripCounter(target) {
  let roundTrips = 0;
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    // The startup packet has no type byte; every message after it is type, int32 length, body.
    let started = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) {
            break;
          }
          const length = pending.readInt32BE(0);
          const code = pending.readInt32BE(4);
          if (pending.length < length) {
            break;
          }
          pending = pending.subarray(length);
          // An SSLRequest or GSSENCRequest (answered by one byte) comes before the real startup.
          started = code !== 80877103 && code !== 80877104;
          continue;
        }
        if (pending.length < 5) {
          break;
        }
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) {
          break;
        }
        if (pending[0] === SYNC || pending[0] === QUERY) {
          roundTrips += 1;
        }
        pending = pending.subarray(1 + length);
      }
    });
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: server.address().port,
    count: () => roundTrips,
    reset: () => {
      roundTrips = 0;
    },
    close: async () => {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * Sends `requests` one after another (each from make(i), a fetch-like { method, path, headers,
 * body }) to `url` and returns the round trips counted per request, after a pause that lets
 * work done after the answer (the audit trail's batch) land in the count too.
 */
export async function roundTripsPerRequest(counter, url, count, make, settleMs = 300) {
  counter.reset();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const { method, path, headers, body, expect } = make(i);
    const { status, text } = await send(url + path, { method, headers }, body);
    if (status !== expect) {
      throw new Error(`${method} ${path} answered ${status}, not ${expect}: ${text}`);
    }
    make.onBody?.(i, text);
  }
  await delay(settleMs);
  return { perRequest: counter.count() / count, ms: performance.now() - started };
}

function send(url, options, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
