import { Injectable, Logger } from '@nestjs/common';
import { NotFoundError } from '../../common/errors/domain-errors.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { Clock } from '../../common/time/clock.js';
import { AuthEvents } from '../../events/auth-events.js';
import { forRequest } from '../../logging/log-fields.js';
import { UsersMessages } from '../../users/users.messages.js';
import { UsersService } from '../../users/users.service.js';
import { OAUTH_SCOPES, OAuthClientsService } from '../oauth-clients.service.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import type {
  OAuthGrantResponseDto,
  OAuthGrantsResponseDto,
} from './dto/oauth-grant-response.dto.js';
import { OAuthGrantRepository, type StoredGrant } from './oauth-grant.repository.js';

/**
 * The consent a person gave applications, as the protocol library keeps it (one `Grant` per
 * account and client, see docs/oauth-applications.md "Consent"): listed for the person and for
 * the admin API, withdrawn by the person (which ends the grant's codes and tokens), and found
 * again when the application asks for the person in another browser session, so that consent
 * is asked only for scopes it does not cover yet.
 */
@Injectable()
export class OAuthGrantsService {
  private readonly logger = new Logger(OAuthGrantsService.name);

  constructor(
    private readonly grants: OAuthGrantRepository,
    private readonly clients: OAuthClientsService,
    private readonly users: UsersService,
    private readonly events: AuthEvents,
    private readonly clock: Clock,
  ) {}

  /** The account's grants, one per application still registered, most recently given first. */
  async list(accountId: string): Promise<OAuthGrantsResponseDto> {
    const byClient = new Map<string, StoredGrant[]>();
    for (const grant of await this.grants.ofAccount(accountId, this.clock.now())) {
      byClient.set(grant.clientId, [...(byClient.get(grant.clientId) ?? []), grant]);
    }
    const listed: OAuthGrantResponseDto[] = [];
    for (const [clientId, grants] of byClient) {
      // A removed application's grants answer nothing any more; they expire with their rows.
      const client = await this.clients.find(clientId);
      if (client !== null) {
        listed.push(merged(clientId, client.name, grants));
      }
    }
    listed.sort(
      (a, b) =>
        b.grantedAt.getTime() - a.grantedAt.getTime() || a.clientId.localeCompare(b.clientId),
    );
    return { grants: listed };
  }

  /** The admin API's listing: the account's grants; unknown account: not found. */
  async listForAdmin(accountId: string): Promise<OAuthGrantsResponseDto> {
    if ((await this.users.findById(accountId)) === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    return this.list(accountId);
  }

  /**
   * Withdraws the consent the account gave the client: its grants are deleted with every code,
   * access token and refresh token issued under them, in one transaction with the event. The
   * next authorization of that client asks for consent again.
   */
  async withdraw(accountId: string, clientId: string, origin: RequestOrigin): Promise<void> {
    const grants = (await this.grants.ofAccount(accountId, this.clock.now())).filter(
      (grant) => grant.clientId === clientId,
    );
    if (grants.length === 0) {
      throw new NotFoundError(OAuthServerMessages.grantNotFound);
    }
    await this.grants.deleteGrants(
      grants.map((grant) => grant.grantId),
      (m) =>
        this.events.record(
          m,
          {
            type: 'oauth_consent_withdrawn',
            userId: accountId,
            clientId,
            scopes: scopesOf(grants),
          },
          origin,
        ),
    );
    this.logger.log(
      `Account ${accountId} withdrew its consent to OAuth client ${clientId}`,
      forRequest(origin.requestId),
    );
  }

  /**
   * The grant the account already gave the client, when the browser session knows none (another
   * browser, a new sign-in): the most recent live one; undefined when there is none.
   */
  async remembered(accountId: string, clientId: string): Promise<string | undefined> {
    const grants = await this.grants.ofAccount(accountId, this.clock.now());
    return grants.filter((grant) => grant.clientId === clientId).at(-1)?.grantId;
  }

  /** Records the consent given on the consent page (the library saved the grant itself). */
  async consentGiven(
    accountId: string,
    clientId: string,
    scopes: readonly string[],
    origin: RequestOrigin,
  ): Promise<void> {
    await this.events.recordAlone(
      { type: 'oauth_consent_granted', userId: accountId, clientId, scopes: [...scopes] },
      origin,
    );
  }
}

/** Several grants of one client (given before consent was remembered) read as one. */
function merged(
  clientId: string,
  clientName: string,
  grants: readonly StoredGrant[],
): OAuthGrantResponseDto {
  const expiries = grants.flatMap((grant) => (grant.expiresAt === null ? [] : [grant.expiresAt]));
  return {
    clientId,
    clientName,
    scopes: scopesOf(grants),
    grantedAt: new Date(Math.min(...grants.map((grant) => grant.grantedAt.getTime()))),
    expiresAt:
      expiries.length < grants.length
        ? null
        : new Date(Math.max(...expiries.map((at) => at.getTime()))),
  };
}

/** The scopes the grants cover together, in OAUTH_SCOPES order. */
function scopesOf(grants: readonly StoredGrant[]): string[] {
  const covered = new Set(grants.flatMap((grant) => grant.scopes));
  return OAUTH_SCOPES.filter((scope) => covered.has(scope));
}
