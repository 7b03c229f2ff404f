import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** A route as Fastify registered it: `url` keeps Fastify's `:param` syntax. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

/**
 * Records every route Fastify registers from now on, whoever registers it. Call it before the
 * app initialises (listen() or init()), which is when Nest registers its routes.
 */
export function recordRoutes(app: NestFastifyApplication): readonly RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', ({ method, url }) => {
      for (const one of [method].flat()) {
        routes.push({ method: one, url });
      }
    });
  return routes;
}
