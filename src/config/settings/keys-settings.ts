import {
  SIGNING_ALGORITHMS,
  type EnvironmentVariables,
  type SigningAlgorithm,
} from '../environment-variables.js';
import { parseEncryptionKeys, type EncryptionKey } from './encryption-keys.js';

/** How access tokens are signed, and how the key set (src/keys) moves. */
export interface KeysConfig {
  readonly signingAlgorithm: SigningAlgorithm;
  /** Seal the private halves of signing keys: the first seals, every one opens. */
  readonly encryptionKeys: readonly EncryptionKey[];
  /** The JWKS's Cache-Control max-age. */
  readonly jwksMaxAgeSeconds: number;
  /** How often each instance reads the key table again. */
  readonly refreshIntervalSeconds: number;
  /** A new key is made this long after the current one was; 0: never automatically. */
  readonly rotationIntervalDays: number;
}

const SIGNING_KEY_SEAL_LABEL = 'keygate-signing-key-seal:';

/** The Keys__* settings and Jwt__SigningAlgorithm, and the rule between them. */
export function checkKeys(env: EnvironmentVariables): { keys?: KeysConfig; problems: string[] } {
  const { keys: encryptionKeys, problems } = parseEncryptionKeys(
    'Keys__EncryptionKeys',
    env.Keys__EncryptionKeys,
    SIGNING_KEY_SEAL_LABEL,
  );
  const isAsymmetric =
    env.Jwt__SigningAlgorithm !== 'HS256' &&
    (SIGNING_ALGORITHMS as readonly string[]).includes(env.Jwt__SigningAlgorithm);
  if (problems.length === 0 && isAsymmetric && encryptionKeys.length === 0) {
    problems.push(
      `Keys__EncryptionKeys is required when Jwt__SigningAlgorithm is ${env.Jwt__SigningAlgorithm}: ` +
        'private signing keys are stored only encrypted',
    );
  }
  if (problems.length > 0) {
    return { problems };
  }
  return {
    keys: {
      signingAlgorithm: env.Jwt__SigningAlgorithm,
      encryptionKeys,
      jwksMaxAgeSeconds: env.Keys__JwksMaxAgeSeconds,
      refreshIntervalSeconds: env.Keys__RefreshIntervalSeconds,
      rotationIntervalDays: env.Keys__RotationIntervalDays,
    },
    problems,
  };
}
