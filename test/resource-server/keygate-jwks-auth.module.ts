import { Module, type DynamicModule } from '@nestjs/common';
import { KEYGATE_VERIFIER, KeygateAuthGuard } from './keygate-auth.guard.js';
import { keygateJwksVerifier, type KeygateJwksSettings } from './keygate-jwks-verifier.js';

/** KeygateAuthGuard, verifying with the JWKS instead of the secret: nothing secret to hold. */
@Module({})
export class KeygateJwksAuthModule {
  static forRoot(settings: KeygateJwksSettings): DynamicModule {
    return {
      module: KeygateJwksAuthModule,
      global: true,
      providers: [
        { provide: KEYGATE_VERIFIER, useValue: keygateJwksVerifier(settings) },
        KeygateAuthGuard,
      ],
      exports: [KEYGATE_VERIFIER, KeygateAuthGuard],
    };
  }
}
