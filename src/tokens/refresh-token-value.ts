import { digestOpaqueToken, generateOpaqueToken } from '../common/crypto/opaque-token.js';

/** A new raw refresh token (base64url) and the digest under which it is stored. */
export const generateRefreshTokenValue = generateOpaqueToken;

/** Refresh tokens are stored and looked up only by this digest. */
export const hashRefreshToken = digestOpaqueToken;
