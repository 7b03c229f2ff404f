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
