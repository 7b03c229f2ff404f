import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A self-signed certificate for 127.0.0.1, made by openssl for one test file. */
export interface LoopbackCertificate {
  /** The PEM file: what NODE_EXTRA_CA_CERTS names for a process that must trust it. */
  readonly certificatePath: string;
  readonly certificate: string;
  readonly key: string;
  remove(): void;
}

/** A P-256 key and a certificate valid a day, for IP 127.0.0.1 (its subjectAltName). */
export async function loopbackCertificate(): Promise<LoopbackCertificate> {
  const directory = mkdtempSync(join(tmpdir(), 'keygate-tls-'));
  const certificatePath = join(directory, 'loopback.pem');
  const keyPath = join(directory, 'loopback-key.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyPath,
    '-out',
    certificatePath,
  ]);
  return {
    certificatePath,
    certificate: readFileSync(certificatePath, 'utf8'),
    key: readFileSync(keyPath, 'utf8'),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** One answer of a JSON document server. */
export interface ServedDocument {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** An HTTPS server on 127.0.0.1 answering JSON documents by path; 404 elsewhere. */
export interface HttpsDocumentServer {
  /** `https://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The documents, by path; change them at will. */
  readonly documents: Map<string, ServedDocument>;
  /** The paths requested, in order. */
  readonly requested: string[];
  close(): Promise<void>;
}

export async function serveDocumentsOverHttps(
  certificate: LoopbackCertificate,
): Promise<HttpsDocumentServer> {
  const documents = new Map<string, ServedDocument>();
  const requested: string[] = [];
  const server: Server = createServer(
    { cert: certificate.certificate, key: certificate.key },
    (request, response) => {
      const path = new URL(request.url ?? '/', 'https://127.0.0.1').pathname;
      requested.push(path);
      const document = documents.get(path);
      if (document === undefined) {
        response.writeHead(404).end();
        return;
      }
      response
        .writeHead(document.status ?? 200, {
          'content-type': 'application/json',
          ...document.headers,
        })
        .end(JSON.stringify(document.body));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    origin: `https://127.0.0.1:${port}`,
    documents,
    requested,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
