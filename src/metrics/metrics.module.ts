import { Global, Module } from '@nestjs/common';
import { PasswordHashObserver } from '../passwords/password-hash-observer.js';
import { AuthEventMetrics } from './auth-event-metrics.js';
import { HttpMetrics } from './http-metrics.js';
import { KeygateMetrics } from './keygate-metrics.js';
import { ManagementServer } from './management-server.js';
import { PasswordHashMetrics } from './password-hash-metrics.js';
import { SigningKeyObserver } from '../keys/signing-key-observer.js';
import { SigningKeyMetrics } from './key-age-metrics.js';

/** Global so that PasswordHasher finds its observer without PasswordsModule importing metrics. */
@Global()
@Module({
  providers: [
    KeygateMetrics,
    AuthEventMetrics,
    HttpMetrics,
    ManagementServer,
    { provide: PasswordHashObserver, useClass: PasswordHashMetrics },
    { provide: SigningKeyObserver, useClass: SigningKeyMetrics },
  ],
  exports: [
    HttpMetrics,
    ManagementServer,
    PasswordHashObserver,
    SigningKeyObserver,
    KeygateMetrics,
  ],
})
export class MetricsModule {}
