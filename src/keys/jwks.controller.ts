import { Controller, Get, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator.js';
import type { JwksResponseDto } from './dto/jwks-response.dto.js';
import { JwksHeaders } from './jwks-headers.interceptor.js';
import { KeySet } from './key-set.js';

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
  jwks(): JwksResponseDto {
    return this.keySet.jwks();
  }
}
