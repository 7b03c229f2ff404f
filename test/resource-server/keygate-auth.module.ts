import { Module, type DynamicModule } from '@nestjs/common';
import { KEYGATE_VERIFIER, KeygateAuthGuard } from './keygate-auth.guard.js';
import { keygateVerifier, type KeygateSettings } from './keygate-verifier.js';

@Module({})
export class KeygateAuthModule {
  static forRoot(settings: KeygateSettings): DynamicModule {
    return {
      module: KeygateAuthModule,
      global: true,
      providers: [
        { provide: KEYGATE_VERIFIER, useValue: keygateVerifier(settings) },
        KeygateAuthGuard,
      ],
      exports: [KEYGATE_VERIFIER, KeygateAuthGuard],
    };
  }
}
