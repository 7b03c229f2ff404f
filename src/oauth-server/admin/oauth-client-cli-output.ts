import type { AddedOAuthClient, OAuthClientSummary } from '../oauth-clients.service.js';

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
              `${c.clientId}  ${c.isPublic ? 'public' : 'confidential'}  ${c.createdAt.toISOString()}  ` +
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
} as const;
