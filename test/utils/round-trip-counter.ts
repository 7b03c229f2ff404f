import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

const SYNC = 0x53; // 'S': the end of an extended-protocol query (Parse/Bind/Execute)
const QUERY = 0x51; // 'Q': a simple query (BEGIN, COMMIT, TypeORM's plain statements)
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** A loopback relay to PostgreSQL that counts the round trips the service makes through it. */
export interface RoundTripCounter {
  readonly port: number;
  /** Round trips since the last reset(): the messages after which a client waits for the server. */
  count(): number;
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts a relay to `target` that reads the frontend side of the wire protocol and counts Sync
 * and Query messages, as bench/lib/round-trips.mjs does for the benchmark's report.
 */
export async function startRoundTripCounter(target: {
  host: string;
  port: number;
}): Promise<RoundTripCounter> {
  let roundTrips = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    // The startup packet has no type byte; every message after it is type, int32 length, body.
    let started = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8 || pending.length < pending.readInt32BE(0)) {
            break;
          }
          const code = pending.readInt32BE(4);
          pending = pending.subarray(pending.readInt32BE(0));
          started = code !== SSL_REQUEST && code !== GSSENC_REQUEST;
          continue;
        }
        if (pending.length < 5 || pending.length < 1 + pending.readInt32BE(1)) {
          break;
        }
        if (pending[0] === SYNC || pending[0] === QUERY) {
          roundTrips += 1;
        }
        pending = pending.subarray(1 + pending.readInt32BE(1));
      }
    });
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    count: () => roundTrips,
    reset: () => {
      roundTrips = 0;
    },
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      const closed = once(server, 'close');
      server.close();
      await closed;
    },
  };
}
