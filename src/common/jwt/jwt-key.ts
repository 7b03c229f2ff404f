import { createSecretKey, type KeyObject } from 'node:crypto';
import type { JwtConfig } from '../../config/app-config.js';

export const JWT_ALGORITHM = 'HS256';

/**
 * The signing secret as a KeyObject. jsonwebtoken first tries a string secret as a PEM public
 * key, which costs about 40 times more per sign or verify than a KeyObject.
 */
export function jwtKey(config: JwtConfig): KeyObject {
  return createSecretKey(Buffer.from(config.secret, 'utf8'));
}
