import { JwtService } from '@nestjs/jwt';
import { randomBytes, randomUUID } from 'node:crypto';
import { JWT_ALGORITHM, jwtKey } from '../common/jwt/jwt-key.js';
import { AccessTokenSigner, type AccessTokenClaims } from './access-token.service.js';
import type { AuthMethod } from './auth-methods.js';

/** How the service signed before decision 0032: @nestjs/jwt's JwtService over jsonwebtoken. */
function jsonwebtokenSigner(config: { secret: string; issuer: string; audience: string }) {
  const { kid, key } = jwtKey(config.secret);
  const jwt = new JwtService({
    privateKey: key,
    signOptions: {
      algorithm: JWT_ALGORITHM,
      keyid: kid,
      issuer: config.issuer,
      audience: config.audience,
    },
  });
  return (claims: AccessTokenClaims): string => jwt.sign({ ...claims });
}

const CONFIGS = [
  { secret: 'a'.repeat(32), issuer: 'keygate', audience: 'keygate-clients' },
  {
    secret: `ñandú-${randomBytes(24).toString('base64')}`,
    issuer: 'https://id.example.com/"quoted"\\path',
    audience: 'clientes-ñ 🙂',
  },
];

const AMRS: readonly (readonly AuthMethod[])[] = [['pwd'], ['pwd', 'otp'], []];

function claimsOf(n: number): AccessTokenClaims {
  const iat = 1_795_000_000 + n * 7_919;
  return {
    sub: randomUUID(),
    sid: randomUUID(),
    email: n % 3 === 0 ? `josé.ñ+${n}@exämple.com` : `user${n}@example.com`,
    email_verified: n % 2 === 0,
    amr: AMRS[n % AMRS.length],
    jti: randomUUID(),
    iat,
    exp: iat + 900 + n,
  };
}

describe(AccessTokenSigner.name, () => {
  it('should give the same bytes as jsonwebtoken for the same claims and key', () => {
    for (const config of CONFIGS) {
      const sut = new AccessTokenSigner(config);
      const reference = jsonwebtokenSigner(config);

      for (let n = 0; n < 60; n++) {
        const claims = claimsOf(n);

        expect(sut.sign(claims)).toBe(reference(claims));
      }
    }
  });

  it('should name its key in the header and carry the issuer and audience after the claims', () => {
    const config = CONFIGS[0];
    const claims = claimsOf(1);

    const [header, payload] = new AccessTokenSigner(config)
      .sign(claims)
      .split('.')
      .map((part) => Buffer.from(part, 'base64url').toString('utf8'));

    expect(header).toBe(
      JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: jwtKey(config.secret).kid }),
    );
    expect(payload).toBe(JSON.stringify({ ...claims, aud: config.audience, iss: config.issuer }));
  });
});
