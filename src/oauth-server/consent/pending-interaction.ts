import type { Interaction } from 'oidc-provider';

/** An interaction in progress, as the consent steps need it (the hosted pages and the API). */
export interface PendingInteraction {
  readonly uid: string;
  /** The step the provider waits for: `login` or `consent`. */
  readonly prompt: string;
  readonly clientName: string;
  /** The client registered itself (dynamic registration or a metadata document). */
  readonly isUnverified: boolean;
  /** ... and every redirect URI it has is on loopback. */
  readonly isLocalOnly: boolean;
  /** The host (and port) the redirect URI returns to: what the person is told. */
  readonly returnHost: string;
  /** Where the page's form may lead, beyond this origin (its redirects end at the client). */
  readonly formTargets: readonly string[];
  readonly accountId: string | undefined;
  readonly grantId: string | undefined;
  readonly clientId: string;
  readonly missingScopes: readonly string[];
  /** The scopes the request asks for (prompt=consent asks again for those already given). */
  readonly askedScopes: readonly string[];
  readonly missingClaims: readonly string[];
  /** RFC 8707: the scopes asked for each resource indicator, not granted yet. */
  readonly missingResourceScopes: Readonly<Record<string, readonly string[]>>;
  /** When the interaction ends, in seconds since the epoch. */
  readonly expiresAt: number;
}

/** The client of an interaction, as the consent steps describe it; null when unknown. */
export interface InteractionClient {
  readonly name: string;
  readonly isUnverified: boolean;
  /** Every redirect URI of a client that registered itself is on loopback. */
  readonly isLocalOnly: boolean;
}

/**
 * What an interaction asks, from the library's record of it: the client (its name when it is
 * registered), the redirect's host, and the scopes, claims and resource scopes not granted yet.
 */
export function pendingOf(
  interaction: Interaction,
  client: InteractionClient | null,
  extraFormTargets: readonly string[] = [],
): PendingInteraction {
  const clientId = textOf(interaction.params.client_id);
  const target = targetOf(textOf(interaction.params.redirect_uri));
  const details = interaction.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  return {
    uid: interaction.uid,
    prompt: interaction.prompt.name,
    clientId,
    clientName: client?.name ?? clientId,
    isUnverified: client?.isUnverified ?? false,
    isLocalOnly: client?.isLocalOnly ?? false,
    returnHost: target.host,
    formTargets: [...(target.origin === null ? [] : [target.origin]), ...extraFormTargets],
    accountId: interaction.session?.accountId,
    grantId: interaction.grantId,
    missingScopes: details.missingOIDCScope ?? [],
    askedScopes: textOf(interaction.params.scope)
      .split(' ')
      .filter((scope) => scope !== ''),
    missingClaims: details.missingOIDCClaims ?? [],
    missingResourceScopes: details.missingResourceScopes ?? {},
    expiresAt: interaction.exp,
  };
}

/**
 * The scopes a consent is asked for: the ones not granted yet, or, with prompt=consent on a grant
 * that covers the request already, the ones the request asks.
 */
export function scopesToApprove(pending: PendingInteraction): readonly string[] {
  const resourceScopes = Object.values(pending.missingResourceScopes).flat();
  return pending.missingScopes.length > 0 || resourceScopes.length > 0
    ? pending.missingScopes
    : pending.askedScopes;
}

/** A request parameter as text; '' when absent or not one string. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The host (and port) a redirect URI returns to, and the origin a form may lead to. */
function targetOf(redirectUri: string): { host: string; origin: string | null } {
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'https:' || url.protocol === 'http:') {
      return { host: url.host, origin: url.origin };
    }
    // A native application's private-use scheme: the scheme is all there is to show.
    return { host: url.protocol, origin: url.protocol };
  } catch {
    return { host: '', origin: null };
  }
}
