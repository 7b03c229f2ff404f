import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

// A WebAuthn authenticator in software, written from the specification (WebAuthn Level 3 §6.1,
// §6.5; RFC 8949 CBOR; RFC 9053 COSE keys), independent of @simplewebauthn/server, which the
// service uses to check what it makes. ES256 keys, "none" attestation, discoverable credentials.
// It signs whatever it is told to (another origin, an old counter), so tests can make every
// response a browser would refuse to make, and record the ones it made to replay them.

/** What `credential.toJSON()` answers for a new credential. */
export interface RegistrationJson {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, never>;
}

/** What `credential.toJSON()` answers for an assertion. */
export interface AuthenticationJson {
  id: string;
  rawId: string;
  type: 'public-key';
  response: {
    clientDataJSON: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string;
  };
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, never>;
}

/** What a ceremony is made with: by default the authenticator's own origin and relying party. */
export interface CeremonyOverrides {
  readonly origin?: string;
  readonly rpId?: string;
  /** The user-verified flag (UV); true by default. */
  readonly userVerified?: boolean;
  /** The signature counter to report; by default one more than the last. */
  readonly counter?: number;
  /** The `type` of the client data; `webauthn.create` / `webauthn.get` by default. */
  readonly type?: string;
}

interface Credential {
  readonly id: Buffer;
  readonly privateKey: KeyObject;
  readonly publicKey: Buffer;
  readonly userHandle: string;
  counter: number;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

export class SoftwareAuthenticator {
  private readonly credentials: Credential[] = [];

  constructor(
    private readonly rpId: string,
    private readonly origin: string,
    /** A synced passkey (backup eligible and backed up), or one bound to this device. */
    private readonly isSynced = false,
    /** Counts signatures, or reports 0 always as many platform authenticators do. */
    private readonly keepsCounter = true,
  ) {}

  /** `navigator.credentials.create()` for creation options `{ challenge, user: { id } }`. */
  create(
    options: { challenge: string; user: { id: string } },
    overrides: CeremonyOverrides = {},
  ): RegistrationJson {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const credential: Credential = {
      id: randomBytes(32),
      privateKey,
      publicKey: cbor(
        new Map<number, unknown>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x ?? '', 'base64url')],
          [-3, Buffer.from(jwk.y ?? '', 'base64url')],
        ]),
      ),
      userHandle: options.user.id,
      counter: 0,
    };
    this.credentials.push(credential);
    const counter = overrides.counter ?? 0;
    const attested = Buffer.concat([
      Buffer.alloc(16),
      uint16(credential.id.length),
      credential.id,
      credential.publicKey,
    ]);
    const authData = this.authenticatorData(overrides, counter, FLAG_AT, attested);
    const clientData = this.clientData('webauthn.create', options.challenge, overrides);
    const id = credential.id.toString('base64url');
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        attestationObject: cbor(
          new Map<string, unknown>([
            ['fmt', 'none'],
            ['attStmt', new Map()],
            ['authData', authData],
          ]),
        ).toString('base64url'),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /** `navigator.credentials.get()` with the newest credential, or the one named. */
  get(
    options: { challenge: string },
    overrides: CeremonyOverrides & { readonly credentialId?: string } = {},
  ): AuthenticationJson {
    const credential =
      overrides.credentialId === undefined
        ? this.credentials.at(-1)
        : this.credentials.find((c) => c.id.toString('base64url') === overrides.credentialId);
    if (credential === undefined) {
      throw new Error('SoftwareAuthenticator: no such credential');
    }
    if (overrides.counter === undefined && this.keepsCounter) {
      credential.counter += 1;
    }
    const counter = overrides.counter ?? (this.keepsCounter ? credential.counter : 0);
    const authData = this.authenticatorData(overrides, counter, 0, Buffer.alloc(0));
    const clientData = this.clientData('webauthn.get', options.challenge, overrides);
    const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
    const id = credential.id.toString('base64url');
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: sign('sha256', signed, credential.privateKey).toString('base64url'),
        userHandle: credential.userHandle,
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  private authenticatorData(
    overrides: CeremonyOverrides,
    counter: number,
    extraFlags: number,
    attested: Buffer,
  ): Buffer {
    const rpIdHash = createHash('sha256')
      .update(overrides.rpId ?? this.rpId)
      .digest();
    const flags =
      FLAG_UP |
      (overrides.userVerified === false ? 0 : FLAG_UV) |
      (this.isSynced ? FLAG_BE | FLAG_BS : 0) |
      extraFlags;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([rpIdHash, Buffer.from([flags]), count, attested]);
  }

  private clientData(type: string, challenge: string, overrides: CeremonyOverrides): Buffer {
    return Buffer.from(
      JSON.stringify({
        type: overrides.type ?? type,
        challenge,
        origin: overrides.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
  }
}

function uint16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

/** The CBOR of integers, text, byte strings and maps: all that attestation objects and COSE keys use. */
function cbor(value: unknown): Buffer {
  if (typeof value === 'number') {
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (Buffer.isBuffer(value)) {
    return Buffer.concat([head(2, value.length), value]);
  }
  if (value instanceof Map) {
    const entries = [...(value as Map<unknown, unknown>).entries()];
    return Buffer.concat([
      head(5, entries.length),
      ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)]),
    ]);
  }
  throw new Error(`cbor: cannot encode ${typeof value}`);
}

function head(major: number, length: number): Buffer {
  if (length < 24) {
    return Buffer.from([(major << 5) | length]);
  }
  if (length < 256) {
    return Buffer.from([(major << 5) | 24, length]);
  }
  return Buffer.concat([Buffer.from([(major << 5) | 25]), uint16(length)]);
}
