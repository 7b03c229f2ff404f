import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig } from '../config/app-config.js';
import { KeygateMetrics } from './keygate-metrics.js';

export const METRICS_PATH = '/metrics';

/**
 * The management listener: `GET /metrics` in the Prometheus text format, on its own port and
 * interface, so metrics never share the public port. Plain node:http, with no routes, guards or
 * filters of the API.
 */
@Injectable()
export class ManagementServer implements OnApplicationShutdown {
  private readonly logger = new Logger(ManagementServer.name);
  private server: Server | undefined;
  private mounted: MountedHandler | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: KeygateMetrics,
  ) {}

  /**
   * Listens, unless Management__Enabled is off. Called once the app serves requests (main.ts),
   * so a scrape never sees a half-started process; an address in use stops the start-up.
   */
  async start(): Promise<void> {
    const { enabled, port, host } = this.config.management;
    if (!enabled) {
      this.logger.log('Management listener off (Management__Enabled=false): no metrics');
      return;
    }
    if (this.server !== undefined) {
      return;
    }
    const server = createServer((request, response) => {
      void this.answer(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error): void => {
        reject(new Error(`Management__Port: cannot listen on ${host}:${port}: ${error.message}`));
      };
      server.once('error', fail);
      server.listen(port, host, () => {
        server.off('error', fail);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`Metrics at http://${formatHost(host)}:${this.address?.port}${METRICS_PATH}`);
  }

  /**
   * Hands every request whose path starts with `prefix` to `handler` instead (the admin API, when
   * AdminApi__Listener=management), while `shown` says those routes exist; while they do not (or
   * `shown` fails), such a request is answered as any unknown path of this listener is. Call
   * before start(); one mount at most.
   */
  mount(
    prefix: string,
    handler: (request: IncomingMessage, response: ServerResponse) => void,
    shown: (request: IncomingMessage) => Promise<boolean>,
  ): void {
    if (this.mounted !== undefined) {
      throw new Error(`The management listener already serves ${this.mounted.prefix}`);
    }
    this.mounted = { prefix, handler, shown };
  }

  /** Where the listener is bound (the actual port when 0 was asked for); null when it is not. */
  get address(): AddressInfo | null {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? address : null;
  }

  /** Closed with the app, by app.close() as by a signal, so no handle outlives it. */
  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server === undefined) {
      return;
    }
    this.server = undefined;
    const closed = once(server, 'close');
    server.close();
    // A scraper keeps its connection alive between scrapes; idle ones would hold close() open.
    server.closeIdleConnections();
    await closed;
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    const mounted = this.mounted;
    if (
      mounted !== undefined &&
      path.startsWith(mounted.prefix) &&
      (await mounted.shown(request).catch(() => false))
    ) {
      mounted.handler(request, response);
      return;
    }
    if (path !== METRICS_PATH) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('Method Not Allowed\n');
      return;
    }
    try {
      const body = await this.metrics.scraped.metrics();
      response.writeHead(200, { 'content-type': this.metrics.scraped.contentType }).end(body);
    } catch (error: unknown) {
      this.logger.error(
        'Collecting metrics failed',
        error instanceof Error ? error.stack : String(error),
      );
      response
        .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Internal Server Error\n');
    }
  }
}

interface MountedHandler {
  readonly prefix: string;
  readonly handler: (request: IncomingMessage, response: ServerResponse) => void;
  readonly shown: (request: IncomingMessage) => Promise<boolean>;
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
