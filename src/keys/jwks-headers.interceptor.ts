import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import { AppConfig } from '../config/app-config.js';

/**
 * The JWKS's headers, in place of the API's `no-store`: cacheable by anyone for
 * Keys__JwksMaxAgeSeconds (shorter than the time a next key is published before it signs, see
 * KeysService), and readable by a page of any origin, since it is public and carries no
 * credentials.
 */
@Injectable()
export class JwksHeaders implements NestInterceptor {
  private readonly cacheControl: string;

  constructor(config: AppConfig) {
    this.cacheControl = `public, max-age=${config.keys.jwksMaxAgeSeconds}`;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    reply
      .removeHeader('pragma')
      .removeHeader('access-control-allow-credentials')
      .header('cache-control', this.cacheControl)
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin');
    return next.handle();
  }
}
