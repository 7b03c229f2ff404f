import {
  Inject,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { KeygateIdentity } from './keygate-verifier.js';

/** The verifier the guard uses: `keygateVerifier(settings)`, provided by KeygateAuthModule. */
export const KEYGATE_VERIFIER = Symbol('KEYGATE_VERIFIER');

/** A request that passed the guard carries whom it is for. */
export interface KeygateRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  keygate?: KeygateIdentity;
}

/** Lets a request through only with a valid Keygate access token: `Authorization: Bearer <token>`. */
@Injectable()
export class KeygateAuthGuard implements CanActivate {
  constructor(
    @Inject(KEYGATE_VERIFIER)
    private readonly verify: (token: string) => Promise<KeygateIdentity | null>,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<KeygateRequest>();
    const { authorization } = request.headers;
    const token =
      typeof authorization === 'string' ? /^Bearer (\S+)$/.exec(authorization)?.[1] : undefined;
    const identity = token === undefined ? null : await this.verify(token);
    if (identity === null) {
      throw new UnauthorizedException();
    }
    request.keygate = identity;
    return true;
  }
}
