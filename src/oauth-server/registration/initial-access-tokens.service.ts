import { Injectable, Logger } from '@nestjs/common';
import { RandomSource } from '../../common/random/random-source.js';
import { Clock } from '../../common/time/clock.js';
import { artefactDigest } from '../storage/artefact-adapter.js';
import { OAuthArtefactRepository } from '../storage/oauth-artefact.repository.js';

/** The library's model name: its storage rows have this kind. */
const KIND = 'InitialAccessToken';

/** Every initial access token starts so: a leaked one is recognisable. */
export const INITIAL_ACCESS_TOKEN_PREFIX = 'kgiat_';
const TOKEN_BYTES = 32;

/** How long a token works when the command names no duration, and at most. */
export const INITIAL_ACCESS_TOKEN_DEFAULT_SECONDS = 7 * 24 * 60 * 60;
export const INITIAL_ACCESS_TOKEN_MAX_SECONDS = 365 * 24 * 60 * 60;

/** A new token: shown this once, stored only as its digest. */
export interface NewInitialAccessToken {
  readonly token: string;
  readonly expiresAt: Date;
}

/**
 * The initial access tokens of dynamic registration (OAuthServer__DynamicRegistration=
 * initial-access-token, RFC 7591 §3): made by an operator with the CLI, stored as the library
 * stores its own tokens (a row of `oauth_artefacts` keyed by the digest of the token, with the
 * payload the library reads back), so the library finds it when a registration presents it.
 * A token may register any number of clients until it expires; each registration is audited.
 */
@Injectable()
export class InitialAccessTokensService {
  private readonly logger = new Logger(InitialAccessTokensService.name);

  constructor(
    private readonly rows: OAuthArtefactRepository,
    private readonly random: RandomSource,
    private readonly clock: Clock,
  ) {}

  async create(expiresInSeconds: number): Promise<NewInitialAccessToken> {
    const token =
      INITIAL_ACCESS_TOKEN_PREFIX + this.random.bytes(TOKEN_BYTES).toString('base64url');
    const expiresAt = new Date(this.clock.now().getTime() + expiresInSeconds * 1000);
    await this.rows.save({
      kind: KIND,
      idDigest: artefactDigest(token),
      // No `exp` in the payload: the row's expiry, read against Keygate's clock by the storage
      // adapter, is the one that decides (the library would compare `exp` with its own).
      payload: JSON.stringify({ kind: KIND }),
      grantId: null,
      uidDigest: null,
      userCodeDigest: null,
      expiresAt,
    });
    this.logger.log(
      `Made an initial access token for registration, expiring ${expiresAt.toISOString()}`,
    );
    return { token, expiresAt };
  }
}
