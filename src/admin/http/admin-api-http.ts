import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AppConfig } from '../../config/app-config.js';
import { gateRoutesUnder } from '../../http/route-gate.js';
import { KeygateMetrics } from '../../metrics/keygate-metrics.js';
import { ManagementServer } from '../../metrics/management-server.js';
import { AdminKeysService } from '../keys/admin-keys.service.js';
import { ADMIN_API_PREFIX, markViaManagement } from './admin-listener.js';

/** What keygate_admin_api_requests_total calls each answer's status. */
export function outcomeOf(status: number): string {
  if (status < 400) {
    return 'ok';
  }
  return OUTCOMES[status] ?? (status >= 500 ? 'error' : 'bad_request');
}

const OUTCOMES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  503: 'unavailable',
};

/**
 * The admin API's place in the HTTP layer: every answer of an admin route is counted by route
 * pattern and outcome, and with AdminApi__Listener=management the management listener hands
 * `/api/admin/` requests to the application, marked so the guard knows where they came from.
 * Hooks go on before the application is ready (Fastify attaches them to routes then).
 *
 * Where the admin API is not shown (while no unrevoked key exists, and always on the listener
 * AdminApi__Listener does not name), every request under `/api/admin/`, whatever its method,
 * content type or body, is answered before routing exactly as an unknown path of that listener
 * is: the application's JSON 404 on the public port, the management listener's plain-text one
 * there. This is the one place that decides it; AdminKeyGuard's own 404s stay as a second wall.
 */
@Injectable()
export class AdminApiHttp implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly metrics: KeygateMetrics,
    private readonly management: ManagementServer,
    private readonly config: AppConfig,
    private readonly keys: AdminKeysService,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter as { getInstance(): FastifyInstance } | undefined;
    if (adapter === undefined) {
      // An application context without HTTP (the admin CLI's) serves no admin route.
      return;
    }
    const fastify = adapter.getInstance();
    const requests = this.metrics.adminApiRequests;
    fastify.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url;
      if (route?.startsWith(ADMIN_API_PREFIX) === true) {
        requests.inc({ route, outcome: outcomeOf(reply.statusCode) });
      }
      done();
    });
    const anyKey = (): Promise<boolean> => this.keys.anyActive();
    const onPublic = this.config.adminApi.listener === 'public';
    gateRoutesUnder(fastify, ADMIN_API_PREFIX, onPublic ? anyKey : () => Promise.resolve(false), {
      install: true,
    });
    if (!onPublic) {
      this.management.mount(
        ADMIN_API_PREFIX,
        (request, response) => {
          markViaManagement(request);
          fastify.routing(request, response);
        },
        anyKey,
      );
    }
  }
}
