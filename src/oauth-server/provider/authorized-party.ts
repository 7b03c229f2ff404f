import type Provider from 'oidc-provider';

/** The members of the library's ID token this file wraps (not in its typings). */
interface IdTokenMembers {
  readonly client?: { readonly clientId: string };
  set(key: string, value: unknown): void;
  issue: (this: IdTokenMembers, options?: { use?: string }) => Promise<string>;
}

/**
 * Every ID token names the client it was issued to in `azp` (OpenID Connect Core §2), as issue 39
 * asks of every token a third party gets (access tokens carry `client_id`): an application
 * holding a token someone else's client obtained can tell. The library writes no `azp`, so it is
 * set here before the token is signed.
 */
export function installAuthorizedParty(provider: Provider): void {
  const prototype = provider.IdToken.prototype as unknown as IdTokenMembers;
  const issue = prototype.issue;
  prototype.issue = function issueWithAuthorizedParty(this: IdTokenMembers, options) {
    if (options?.use === 'idtoken' && this.client !== undefined) {
      this.set('azp', this.client.clientId);
    }
    return issue.call(this, options);
  };
}
