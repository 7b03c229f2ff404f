import { Controller, Get, UseInterceptors } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator.js';
import { JwksResponseDto } from './dto/jwks-response.dto.js';
import { JwksHeaders } from './jwks-headers.interceptor.js';
import { KeySet } from './key-set.js';

const EXAMPLE_KEY = {
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
  kid: 'Hq7xk1cZ2mFvY0a9RrT8uWbN3eLs5oPdJ4gC6iK1nQs',
  alg: 'ES256',
  use: 'sig',
};

/** Outside the `api` prefix, where verifiers look for it (RFC 8615 well-known URIs). */
export const KEYS_PATHS = ['.well-known/jwks.json'];

/**
 * The public keys resource servers verify access tokens with. Open, cacheable and readable from
 * any origin (JwksHeaders): it holds nothing secret. Served from the key set in memory.
 */
@ApiTags('keys')
@Public()
@Controller('.well-known')
export class JwksController {
  constructor(private readonly keySet: KeySet) {}

  /** The next, current and previous public keys (RFC 7517); `keys` is empty under HS256. */
  @Get('jwks.json')
  @UseInterceptors(JwksHeaders)
  @ApiOkResponse({
    description: 'The public keys that verify access tokens, by kid. Cacheable, from any origin.',
    type: JwksResponseDto,
    examples: {
      es256: { summary: 'Signing with ES256', value: { keys: [EXAMPLE_KEY] } },
      hs256: { summary: 'Under HS256 (the default): nothing to publish', value: { keys: [] } },
    },
  })
  getJwks(): JwksResponseDto {
    return this.keySet.jwks();
  }
}
