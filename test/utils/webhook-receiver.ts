import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** What the receiver does with the next request. */
export type ReceiverMode =
  | { readonly kind: 'accept' }
  /** Answers this status (a 5xx outage, a 3xx redirect, ...). */
  | { readonly kind: 'status'; readonly status: number; readonly location?: string }
  /** Reads the request, never answers: the sender's deadline ends it. */
  | { readonly kind: 'hang' }
  /** Drops the connection without a word. */
  | { readonly kind: 'reset' };

/** A delivery the receiver verified with the `standardwebhooks` library. */
export interface ReceivedWebhook {
  readonly id: string;
  readonly timestamp: string;
  readonly body: string;
  readonly payload: {
    readonly type: string;
    readonly timestamp: string;
    readonly data: {
      readonly eventId: string;
      readonly accountId: string | null;
      readonly sessionId: string | null;
      readonly ip: string;
    };
  };
}

/**
 * A receiver on loopback, as a team would write one: every request is verified by the
 * `standardwebhooks` npm library (not by code of this project); verified ones are kept in arrival
 * order, and `unique()` drops repeats by `webhook-id`, as the receivers' docs advise.
 */
export class WebhookReceiver {
  /** Every verified delivery, repeats included, in arrival order. */
  readonly received: ReceivedWebhook[] = [];
  /** Requests whose signature did not verify: a test expects none. */
  readonly rejected: string[] = [];
  /** Requests seen, whatever was answered. */
  requests = 0;
  /** Requests of one webhook-id open at one time, at most: one instance holds a delivery at a time. */
  maxConcurrentPerId = 0;
  mode: ReceiverMode = { kind: 'accept' };
  private readonly inFlight = new Map<string, number>();
  private readonly hanging = new Set<ServerResponse>();
  private lastPort = 0;
  private verifier: Webhook | undefined;
  private server: Server | undefined;

  private constructor(private readonly path: string) {}

  /** Starts one on 127.0.0.1; trust() gives it the subscription's secret. */
  static async start(path = '/hooks'): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(path);
    await receiver.listen();
    return receiver;
  }

  /** The subscription's `whsec_…` secret, as `webhooks:add` printed it. */
  trust(secret: string): void {
    this.verifier = new Webhook(secret);
  }

  get port(): number {
    return this.lastPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.path}`;
  }

  /** Verified deliveries, each webhook-id once (its first arrival), in arrival order. */
  unique(): ReceivedWebhook[] {
    const seen = new Set<string>();
    return this.received.filter((w) => !seen.has(w.id) && seen.add(w.id));
  }

  /** Stops listening (connections refused) until start again: an outage. */
  async stop(): Promise<void> {
    for (const response of this.hanging) {
      response.destroy();
    }
    this.hanging.clear();
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    }
  }

  /** Listens again on the port it had (after stop()), or on a free one. */
  async listen(port = this.lastPort): Promise<void> {
    const server = createServer((request, response) => {
      void this.handle(request, response);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
    this.lastPort = (server.address() as AddressInfo).port;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.requests += 1;
    const openId = String(request.headers['webhook-id']);
    const open = (this.inFlight.get(openId) ?? 0) + 1;
    this.inFlight.set(openId, open);
    this.maxConcurrentPerId = Math.max(this.maxConcurrentPerId, open);
    response.once('close', () => this.inFlight.set(openId, (this.inFlight.get(openId) ?? 1) - 1));
    const chunks: Buffer[] = [];
    for await (const chunk of request) {
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(request.headers['webhook-id']);
    const mode = this.mode;
    if (mode.kind === 'hang') {
      this.hanging.add(response);
      return;
    }
    if (mode.kind === 'reset') {
      request.socket.destroy();
      return;
    }
    if (mode.kind === 'status') {
      response.writeHead(
        mode.status,
        mode.location === undefined ? {} : { location: mode.location },
      );
      response.end();
      return;
    }
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    let payload: ReceivedWebhook['payload'];
    try {
      if (this.verifier === undefined) {
        throw new Error('no secret to verify with');
      }
      payload = this.verifier.verify(body, headers) as ReceivedWebhook['payload'];
    } catch (error: unknown) {
      this.rejected.push(`${id}: ${String(error)}`);
      response.writeHead(400);
      response.end();
      return;
    }
    this.received.push({ id, timestamp: headers['webhook-timestamp'], body, payload });
    response.writeHead(204);
    response.end();
  }
}
