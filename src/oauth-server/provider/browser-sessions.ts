import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { artefactDigest } from '../storage/artefact-adapter.js';
import { OAuthArtefactRepository } from '../storage/oauth-artefact.repository.js';

/** The kind of the rows that tie a provider browser session to the Keygate session behind it. */
const KIND = 'KeygateSessionLink';

/**
 * The Keygate session behind each of the provider's browser sessions. A sign-in on the hosted
 * page starts a Keygate session (as a login does); the provider's browser session lives on only
 * while that session does, so logging out everywhere, a password change or a deactivation (which
 * end the account's sessions) also end single sign-on into applications. A browser session with
 * no such link (none is made any other way) counts as ended.
 */
@Injectable()
export class BrowserSessions {
  constructor(
    private readonly rows: OAuthArtefactRepository,
    private readonly tokens: TokensService,
    private readonly clock: Clock,
  ) {}

  /** Ties the provider's session `uid` to the Keygate session `sessionId` for `lifetimeSeconds`. */
  async link(uid: string, sessionId: string, lifetimeSeconds: number): Promise<void> {
    await this.rows.save({
      kind: KIND,
      idDigest: artefactDigest(uid),
      payload: JSON.stringify({ sessionId }),
      grantId: null,
      uidDigest: null,
      userCodeDigest: null,
      expiresAt: new Date(this.clock.now().getTime() + lifetimeSeconds * 1000),
    });
  }

  /** Whether the Keygate session behind the provider's session `uid` of `accountId` is active. */
  async isLive(uid: string, accountId: string): Promise<boolean> {
    const row = await this.rows.byDigest(KIND, artefactDigest(uid));
    const now = this.clock.now();
    if (row === null || (row.expiresAt !== null && row.expiresAt <= now)) {
      return false;
    }
    const { sessionId } = JSON.parse(row.payload) as { sessionId?: unknown };
    if (typeof sessionId !== 'string') {
      return false;
    }
    const session = await this.tokens.findSession(sessionId);
    return session !== null && session.userId === accountId && session.isActiveAt(now);
  }
}
