/** One public key of the JWKS (RFC 7517 §4): its key members, and how it is used. */
export class JwkResponseDto {
  /** `EC` (ES256, P-256), `OKP` (EdDSA, Ed25519) or `RSA` (RS256). */
  readonly kty: string;

  /** The `kid` of the tokens it verifies: the RFC 7638 thumbprint of the key. */
  readonly kid: string;

  /** The only algorithm it verifies. */
  readonly alg: string;

  /** Always `sig`. */
  readonly use: string;

  /** EC and OKP: the curve. */
  readonly crv?: string;

  /** EC and OKP: the public point (base64url). */
  readonly x?: string;

  /** EC: the public point's y (base64url). */
  readonly y?: string;

  /** RSA: the modulus (base64url). */
  readonly n?: string;

  /** RSA: the exponent (base64url). */
  readonly e?: string;
}

/** The JWK Set (RFC 7517 §5): the next, current and previous keys; empty while HS256 alone signs. */
export class JwksResponseDto {
  readonly keys: JwkResponseDto[];
}
