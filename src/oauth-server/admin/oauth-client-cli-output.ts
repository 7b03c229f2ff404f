import type { AddedOAuthClient, OAuthClientSummary } from '../oauth-clients.service.js';
import type { NewInitialAccessToken } from '../registration/initial-access-tokens.service.js';

/** What the client commands print. */
export const OAuthClientCliOutput = {
  /** The secret is printed here and nowhere else, ever. */
  added: (added: AddedOAuthClient): string =>
    [
      `client_id: ${added.clientId}`,
      `name: ${JSON.stringify(added.name)}`,
      `type: ${added.isPublic ? 'public (PKCE, no secret)' : 'confidential'}`,
      `redirect_uris: ${added.redirectUris.join(' ') || '-'}`,
      `post_logout_redirect_uris: ${added.postLogoutRedirectUris.join(' ') || '-'}`,
      `scopes: ${added.scopes.join(' ')}`,
      `grant_types: ${added.grantTypes.join(' ')}`,
      ...(added.clientSecret === null
        ? []
        : [
            `client_secret: ${added.clientSecret}`,
            'The secret is shown this once: give it to the application, which keeps it secret.',
          ]),
    ].join('\n'),

  list: (clients: readonly OAuthClientSummary[]): string =>
    clients.length === 0
      ? 'No OAuth clients.'
      : clients
          .map(
            (c) =>
              `${c.clientId}  ${c.isPublic ? 'public' : 'confidential'}${c.isSelfRegistered ? ' self-registered' : ''}  ${c.createdAt.toISOString()}  ` +
              `scopes=${c.scopes.join(',')}  grant_types=${c.grantTypes.join(',')}  redirect_uris=${c.redirectUris.join(' ')}  ` +
              `name=${JSON.stringify(c.name)}`,
          )
          .join('\n'),

  removed: (id: string): string => `Removed OAuth client ${id}.`,

  /** The new secret is printed here and nowhere else, ever. */
  rotated: (rotated: { clientId: string; clientSecret: string }): string =>
    [
      `client_id: ${rotated.clientId}`,
      `client_secret: ${rotated.clientSecret}`,
      'The secret is shown this once; the previous one no longer works.',
    ].join('\n'),

  /** The token is printed here and nowhere else, ever. */
  initialAccessToken: (made: NewInitialAccessToken): string =>
    [
      `initial_access_token: ${made.token}`,
      `expires_at: ${made.expiresAt.toISOString()}`,
      'The token is shown this once: applications send it as "Authorization: Bearer …" to /oauth/register until it expires.',
    ].join('\n'),
} as const;
