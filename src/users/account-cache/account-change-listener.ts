import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { RandomSource } from '../../common/random/random-source.js';
import { postgresPoolOf } from '../../database/driver-handle.js';
import { AccountStateCache, HEARTBEAT_INTERVAL_MS } from './account-state-cache.js';

/**
 * The channel the `users` trigger notifies (migration 1799000000000-NotifyAccountChanges): its
 * payload is the changed account's id, or `*` after a TRUNCATE. Heartbeats go through it too.
 */
export const ACCOUNT_CHANNEL = 'keygate_account_state';

/** A heartbeat's payload: `hb:<instance>:<sequence number>`; never an account id (a UUID). */
const HEARTBEAT_PREFIX = 'hb:';

/** The first wait before listening again after the connection failed, doubled up to the last. */
const RECONNECT_DELAYS_MS = { first: 100, last: 5_000 } as const;

/** The listening connection's `application_name`. */
export const LISTENER_NAME = 'keygate-account-listener';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Feeds AccountStateCache (Database__AccountCache=on, PostgreSQL): one connection of its own,
 * outside the pool, that LISTENs on ACCOUNT_CHANNEL, sends a heartbeat through it every
 * HEARTBEAT_INTERVAL_MS and tells the cache what arrives. When the connection fails or ends (a
 * restart, a failover, pg_terminate_backend), the cache is told at once, so it reads strictly,
 * and the listener connects again with growing pauses.
 */
@Injectable()
export class AccountChangeListener implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AccountChangeListener.name);
  private readonly instance: string;
  private client: pg.Client | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private reconnectDelayMs: number = RECONNECT_DELAYS_MS.first;
  private isStopping = false;
  private sequence = 0;
  /** Heartbeats sent on the current connection and not yet received: number → when sent. */
  private readonly sent = new Map<number, number>();
  private isHeartbeatInFlight = false;

  constructor(
    private readonly cache: AccountStateCache,
    private readonly dataSource: DataSource,
    random: RandomSource,
  ) {
    this.instance = random.bytes(8).toString('hex');
  }

  onModuleInit(): void {
    if (this.cache.isEnabled) {
      void this.listen();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.isStopping = true;
    clearTimeout(this.reconnect);
    clearInterval(this.heartbeat);
    this.cache.stopped();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** The backend process of the listening connection, for the tests that end it; null if none. */
  get backendPid(): number | null {
    const pid = (this.client as { processID?: unknown } | undefined)?.processID;
    return typeof pid === 'number' ? pid : null;
  }

  /**
   * The pool's own settings (address, credentials, timeouts, keep-alive), for a client of its
   * own, named so that `pg_stat_activity` shows which connection listens.
   */
  protected clientOptions(): pg.ClientConfig {
    return { ...postgresPoolOf(this.dataSource).options, application_name: LISTENER_NAME };
  }

  private async listen(): Promise<void> {
    if (this.isStopping) {
      return;
    }
    const client = new pg.Client(this.clientOptions());
    this.client = client;
    client.on('notification', (message) => this.receive(client, message.channel, message.payload));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCOUNT_CHANNEL}`);
    } catch (error: unknown) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client) {
      return;
    }
    this.sent.clear();
    this.cache.listening();
    this.reconnectDelayMs = RECONNECT_DELAYS_MS.first;
    this.logger.log('Listening for account changes: the account cache answers once proven fresh.');
    this.heartbeat = setInterval(() => this.beat(client), HEARTBEAT_INTERVAL_MS);
    this.heartbeat.unref();
    this.beat(client);
  }

  private beat(client: pg.Client): void {
    if (this.isHeartbeatInFlight || this.client !== client) {
      return;
    }
    this.sequence += 1;
    const sequence = this.sequence;
    this.sent.set(sequence, performance.now());
    this.isHeartbeatInFlight = true;
    client
      .query('SELECT pg_notify($1, $2)', [
        ACCOUNT_CHANNEL,
        `${HEARTBEAT_PREFIX}${this.instance}:${sequence}`,
      ])
      .catch(() => {
        // The connection's own error event tells the cache; a missed heartbeat only ages it.
        this.sent.delete(sequence);
      })
      .finally(() => {
        this.isHeartbeatInFlight = false;
      });
  }

  private receive(client: pg.Client, channel: string, payload: string | undefined): void {
    if (this.client !== client || channel !== ACCOUNT_CHANNEL) {
      return;
    }
    if (payload !== undefined && UUID.test(payload)) {
      this.cache.changed(payload.toLowerCase());
      return;
    }
    if (payload?.startsWith(HEARTBEAT_PREFIX) === true) {
      const [instance, sequence] = payload.slice(HEARTBEAT_PREFIX.length).split(':');
      const sentAt = instance === this.instance ? this.sent.get(Number(sequence)) : undefined;
      if (sentAt !== undefined) {
        // Heartbeats arrive in order: the older ones still waiting are lost.
        for (const number of this.sent.keys()) {
          if (number <= Number(sequence)) {
            this.sent.delete(number);
          }
        }
        this.cache.proven(sentAt);
      }
      return;
    }
    // `*` (a TRUNCATE), or anything else: nothing kept may be trusted.
    this.cache.changedAll();
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client) {
      return;
    }
    this.client = undefined;
    clearInterval(this.heartbeat);
    this.isHeartbeatInFlight = false;
    this.cache.stopped();
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.isStopping) {
      return;
    }
    this.logger.warn(
      `The account cache is bypassed: the listening connection ended${
        error instanceof Error ? ` (${error.message})` : ''
      }; listening again in ${this.reconnectDelayMs} ms.`,
    );
    this.reconnect = setTimeout(() => void this.listen(), this.reconnectDelayMs);
    this.reconnect.unref();
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, RECONNECT_DELAYS_MS.last);
  }
}
