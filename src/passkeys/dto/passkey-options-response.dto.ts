export const CREATION_OPTIONS_EXAMPLE = {
  challenge: 'q8aR0hYQ0V5cD4P1m2w3e4r5t6y7u8i9o0pAsDfGhJk',
  rp: { name: 'Keygate', id: 'example.com' },
  user: {
    id: 'M2YyNTA0ZTAtNGY4OS00MWQzLTlhMGMtMDMwNWU4MmMzMzAx',
    name: 'alice@example.com',
    displayName: 'alice',
  },
  pubKeyCredParams: [
    { alg: -8, type: 'public-key' },
    { alg: -7, type: 'public-key' },
    { alg: -257, type: 'public-key' },
  ],
  timeout: 300000,
  attestation: 'none',
  excludeCredentials: [],
  authenticatorSelection: {
    residentKey: 'required',
    userVerification: 'required',
    requireResidentKey: true,
  },
  extensions: { credProps: true },
  hints: [],
} as const;

export const REQUEST_OPTIONS_EXAMPLE = {
  rpId: 'example.com',
  challenge: 'Zx8bY7cX6dW5eV4fU3gT2hS1iR0jQ9kP8lO7mN6nM5o',
  timeout: 300000,
  userVerification: 'required',
} as const;

/**
 * WebAuthn creation options in their JSON form, for
 * `PublicKeyCredential.parseCreationOptionsFromJSON()` and `navigator.credentials.create()`.
 */
export class PasskeyCreationOptionsResponseDto {
  /** base64url; valid once, for five minutes, for this account's registration only. */
  readonly challenge: string;

  /** @example {"name":"Keygate","id":"example.com"} */
  readonly rp: { name: string; id?: string };

  /** The account, as the authenticator stores it: `id` is base64url. */
  readonly user: { id: string; name: string; displayName: string };

  readonly pubKeyCredParams: { type: 'public-key'; alg: number }[];

  /** Milliseconds. @example 300000 */
  readonly timeout?: number;

  /** The account's passkeys, so the same authenticator is not registered twice. */
  readonly excludeCredentials?: { id: string; type: 'public-key'; transports?: string[] }[];

  /** A discoverable credential with user verification is required. */
  readonly authenticatorSelection?: {
    residentKey?: string;
    requireResidentKey?: boolean;
    userVerification?: string;
  };

  /** @example "none" */
  readonly attestation?: string;

  readonly extensions?: Record<string, unknown>;

  readonly hints?: string[];
}

/**
 * WebAuthn request options in their JSON form, for
 * `PublicKeyCredential.parseRequestOptionsFromJSON()` and `navigator.credentials.get()`.
 */
export class PasskeyRequestOptionsResponseDto {
  /** base64url; valid once, for five minutes, for one assertion. */
  readonly challenge: string;

  /** Milliseconds. @example 300000 */
  readonly timeout?: number;

  /** @example "example.com" */
  readonly rpId?: string;

  /** Empty: any discoverable passkey of this relying party may answer. */
  readonly allowCredentials?: { id: string; type: 'public-key'; transports?: string[] }[];

  /** @example "required" */
  readonly userVerification?: string;

  readonly extensions?: Record<string, unknown>;

  readonly hints?: string[];
}
