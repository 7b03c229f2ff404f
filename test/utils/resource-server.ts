import type { Type } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';

/**
 * Serves the resource server `moduleOf()` returns (an API guarded by one of the documented
 * verifiers) on a free local port for the suite. `moduleOf` runs in the suite's beforeAll, so it
 * may read what earlier hooks started (e.g. Keygate's JWKS address); `url` is the API's once up.
 */
export function useResourceServer(moduleOf: () => Type<unknown>): { readonly url: string } {
  let api: NestFastifyApplication | undefined;
  let url = '';

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [moduleOf()] }).compile();
    api = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), {
      logger: false,
    });
    await api.listen(0, '127.0.0.1');
    url = await api.getUrl();
  });

  afterAll(async () => {
    await api?.close();
  });

  return {
    get url() {
      return url;
    },
  };
}
