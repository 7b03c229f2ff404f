import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { LoadSignals } from '../outbox/delivery-pacer.js';

/**
 * How busy requests keep this process, for work that yields to them (the webhook sender's
 * pacer): a count of requests the HTTP server received, from a listener of Node's own `request`
 * event (one increment a request, whatever Fastify's hooks do), and the event loop's utilization.
 * In an application context (the admin CLI) there is no server, and the count stays at none.
 */
@Injectable()
export class RequestActivity implements LoadSignals, OnModuleInit {
  private started = 0;
  private lastUtilization: EventLoopUtilization = performance.eventLoopUtilization();

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    server?.on('request', () => {
      this.started += 1;
    });
  }

  requestsStarted(): number {
    return this.started;
  }

  loopUtilization(): number {
    const now = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(now, this.lastUtilization);
    this.lastUtilization = now;
    return since.utilization;
  }
}
