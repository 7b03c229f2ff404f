import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString, Matches } from 'class-validator';
import { MaxChars } from '../../common/validation/string-rules.js';

/** Unpadded or padded base64url: what `credential.toJSON()` writes for every binary field. */
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/**
 * Bounds on the binary fields of a browser's answer, in base64url characters: a credential id is
 * at most 1023 bytes (WebAuthn §5.8.3), a COSE key of the algorithms offered a few hundred, a
 * client data JSON and authenticator data far less than these, an attestation object without an
 * attestation statement's certificates (none is asked for) well under it.
 */
export const WEBAUTHN_LIMITS = {
  credentialId: 1364,
  clientDataJSON: 4096,
  attestationObject: 8192,
  authenticatorData: 4096,
  signature: 1024,
  userHandle: 128,
  publicKey: 1024,
} as const;

/** The transports WebAuthn Level 3 names; anything else is refused rather than stored. */
export const AUTHENTICATOR_TRANSPORTS = [
  'ble',
  'cable',
  'hybrid',
  'internal',
  'nfc',
  'smart-card',
  'usb',
] as const;

/** A binary field of a browser's answer, base64url, at most `max` characters. */
export function Base64UrlField(max: number): PropertyDecorator {
  return applyDecorators(
    IsString(),
    IsNotEmpty(),
    MaxChars(max),
    Matches(BASE64URL, { message: '$property must be base64url' }),
  );
}
