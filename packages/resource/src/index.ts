export {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  verifyAccessToken,
  type AccessTokenClaims,
  type AsymmetricAlgorithm,
  type VerifyAccessTokenOptions,
} from './access-token.js';
export { challenge, type ChallengeOptions } from './challenge.js';
export {
  AccessTokenError,
  IssuerUnavailableError,
  type AccessTokenErrorCode,
  type AccessTokenRefusal,
} from './errors.js';
export {
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataOptions,
} from './metadata.js';
