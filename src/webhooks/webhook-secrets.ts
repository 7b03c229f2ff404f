import { Injectable } from '@nestjs/common';
import { SealedBox } from '../common/crypto/sealed-box.js';
import { RandomSource } from '../common/random/random-source.js';
import { AppConfig } from '../config/app-config.js';

/**
 * Subscription secrets at rest: AES-256-GCM (SealedBox) under Webhooks__EncryptionKeys, bound to
 * the subscription's id, so a sealed secret copied to another subscription's row does not open.
 */
@Injectable()
export class WebhookSecrets {
  private readonly box: SealedBox;

  constructor(config: AppConfig, random: RandomSource) {
    this.box = new SealedBox(config.webhooks.keys, random);
  }

  get isConfigured(): boolean {
    return this.box.isConfigured;
  }

  seal(subscriptionId: string, secret: string): string {
    return this.box.seal(subscriptionId, secret);
  }

  /** The `whsec_…` secret; null when no configured key opens it. */
  open(subscriptionId: string, sealed: string): string | null {
    return this.box.open(subscriptionId, sealed);
  }
}
