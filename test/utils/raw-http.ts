import { connect, type Socket } from 'node:net';

/** An answer read off the wire, as the client received it. */
export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The body parsed as JSON. */
  json<T = Record<string, unknown>>(): T;
}

/** Opens a connection to a test app's listener. */
export async function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Everything the server sends on `socket` until it closes the connection, or `timeoutMs` passes. */
export function readUntilClosed(
  socket: Socket,
  timeoutMs = 10_000,
): Promise<{ readonly text: string; readonly closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      socket.removeAllListeners('data');
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closed });
    };
    const timer = setTimeout(() => {
      finish(false);
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('close', () => finish(true));
    // A reset after the answer is still a closed connection.
    socket.on('error', () => undefined);
  });
}

/**
 * Sends `request` exactly as given (no client fixes anything up), then reads the first answer.
 * The connection is closed afterwards.
 */
export async function rawRequest(baseUrl: string, request: string | Buffer): Promise<RawResponse> {
  const socket = await openSocket(baseUrl);
  try {
    const reading = readFirstResponse(socket);
    socket.write(request);
    return await reading;
  } finally {
    socket.destroy();
  }
}

/** Reads one whole answer (its body by Content-Length) from `socket`. */
export function readFirstResponse(socket: Socket, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const timer = setTimeout(
      () => reject(new Error(`no whole answer within ${timeoutMs} ms: ${received.toString()}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseResponse(received);
      if (parsed !== null) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(parsed);
      }
    };
    socket.on('data', onData);
    socket.on('error', () => undefined);
  });
}

/** The answer in `bytes`, or null while it is incomplete. */
export function parseResponse(bytes: Buffer): RawResponse | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) {
    return null;
  }
  const [statusLine, ...headerLines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = bytes.subarray(end + 4);
  if (body.length < length) {
    return null;
  }
  const text = body.subarray(0, length).toString('utf8');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: text,
    json: <T>() => JSON.parse(text) as T,
  };
}

/** A POST of `body` (bytes sent as they are) with a JSON content type and the right length. */
export function rawJsonPost(path: string, body: string | Buffer, extraHeaders = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Buffer.concat([
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\n${extraHeaders}\r\n`,
      'latin1',
    ),
    bytes,
  ]);
}
