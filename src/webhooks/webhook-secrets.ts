import { Injectable } from '@nestjs/common';
import { setBounded } from '../common/collections/bounded-map.js';
import { SealedBox } from '../common/crypto/sealed-box.js';
import { RandomSource } from '../common/random/random-source.js';
import { AppConfig } from '../config/app-config.js';

/**
 * Subscriptions whose opened secret is kept at most; past this the oldest goes, so a deployment
 * with many subscriptions pays an open now and then, never unbounded memory.
 */
const OPENED_MAX = 512;

/**
 * Subscription secrets at rest: AES-256-GCM (SealedBox) under Webhooks__EncryptionKeys, bound to
 * the subscription's id, so a sealed secret copied to another subscription's row does not open.
 *
 * Every delivery signs with its subscription's secret, and opening it cost more than the rest of
 * the delivery's work on the event loop, so opened secrets are kept per subscription together with
 * the sealed value they came from: a rotated secret (a new sealed value) is opened again. The keys
 * are fixed at boot, so a value that opened once opens the same way until restart. Opened secrets
 * stay in this map only and are never logged.
 */
@Injectable()
export class WebhookSecrets {
  private readonly box: SealedBox;
  private readonly opened = new Map<string, { readonly sealed: string; readonly secret: string }>();

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
    const known = this.opened.get(subscriptionId);
    if (known?.sealed === sealed) {
      return known.secret;
    }
    const secret = this.box.open(subscriptionId, sealed);
    // One that does not open is not kept: its deliveries are dead at once, so it is rare.
    if (secret !== null) {
      setBounded(this.opened, subscriptionId, { sealed, secret }, OPENED_MAX);
    }
    return secret;
  }
}
