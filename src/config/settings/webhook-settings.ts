import { parseEncryptionKeys, type EncryptionKey } from './encryption-keys.js';
import type { EnvironmentVariables } from '../environment-variables.js';

/** Webhook subscriptions and their delivery (docs/webhooks.md, docs/operations/webhooks.md). */
export interface WebhooksConfig {
  /** The first seals subscription secrets, every one opens. Empty: webhooks:add refuses. */
  readonly keys: readonly EncryptionKey[];
  readonly allowPrivateDestinations: boolean;
  readonly maxAttempts: number;
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number;
  readonly pollIntervalMs: number;
  readonly retentionDays: number;
  readonly yieldToRequests: boolean;
}

const KEY_LABEL = 'keygate-webhook-key:';

export function checkWebhooks(env: EnvironmentVariables): {
  webhooks?: WebhooksConfig;
  problems: string[];
} {
  const { keys, problems } = parseEncryptionKeys(
    'Webhooks__EncryptionKeys',
    env.Webhooks__EncryptionKeys,
    KEY_LABEL,
  );
  if (env.Webhooks__MaxRetryDelaySeconds < env.Webhooks__RetryDelaySeconds) {
    problems.push(
      `Webhooks__MaxRetryDelaySeconds (${env.Webhooks__MaxRetryDelaySeconds}) must not be below Webhooks__RetryDelaySeconds (${env.Webhooks__RetryDelaySeconds})`,
    );
  }
  if (env.Webhooks__ConnectTimeoutSeconds > env.Webhooks__TimeoutSeconds) {
    problems.push(
      `Webhooks__ConnectTimeoutSeconds (${env.Webhooks__ConnectTimeoutSeconds}) must not exceed Webhooks__TimeoutSeconds (${env.Webhooks__TimeoutSeconds})`,
    );
  }
  if (problems.length > 0) {
    return { problems };
  }
  return {
    webhooks: {
      keys,
      allowPrivateDestinations: env.Webhooks__AllowPrivateDestinations,
      maxAttempts: env.Webhooks__MaxAttempts,
      retryDelayMs: env.Webhooks__RetryDelaySeconds * 1000,
      maxRetryDelayMs: env.Webhooks__MaxRetryDelaySeconds * 1000,
      connectTimeoutMs: env.Webhooks__ConnectTimeoutSeconds * 1000,
      timeoutMs: env.Webhooks__TimeoutSeconds * 1000,
      pollIntervalMs: env.Webhooks__PollIntervalSeconds * 1000,
      retentionDays: env.Webhooks__RetentionDays,
      yieldToRequests: env.Webhooks__YieldToRequests,
    },
    problems,
  };
}
