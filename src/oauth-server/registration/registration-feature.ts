import type { Configuration } from 'oidc-provider';
import type { DynamicRegistrationMode } from '../../config/environment-variables.js';
import { admitSelfRegistration, type RegistrationRefusal } from './self-registration-rules.js';

type RegistrationFeature = NonNullable<NonNullable<Configuration['features']>['registration']>;

/** What dynamic registration needs besides its mode. */
export interface RegistrationParts {
  readonly mode: DynamicRegistrationMode;
  /** The algorithm of the key that signs ID tokens: the only one a client may ask for. */
  readonly idTokenAlgorithm: string;
  readonly newClientId: () => string;
  readonly newClientSecret: () => string;
  /** The library's `invalid_redirect_uri` or `invalid_client_metadata` error (RFC 7591 §3.2.2). */
  readonly refusal: (refusal: RegistrationRefusal) => Error;
}

/**
 * RFC 7591 through the library's `features.registration`, at /oauth/register. `open`: anyone
 * may register; `initial-access-token`: the request must carry a token the CLI made
 * (`oauth-clients:initial-access-token`), which the library looks up in storage by its digest.
 * No registration access token is issued: a client cannot read, change or delete its
 * registration (RFC 7592 is not offered), an operator removes it.
 *
 * Keygate's rules (self-registration-rules.ts) run in `idFactory`, the library's first hook that
 * sees the parsed request: a refused registration gets its RFC 7591 error, and an admitted one
 * continues with only what Keygate keeps, which the library then validates, answers with and
 * hands to the client storage (client-adapter.ts), where it is stored with its secret's digest.
 */
export function registrationFeature(parts: RegistrationParts): RegistrationFeature {
  if (parts.mode === 'off') {
    return { enabled: false };
  }
  return {
    enabled: true,
    initialAccessToken: parts.mode === 'initial-access-token',
    issueRegistrationAccessToken: false,
    idFactory: (ctx) => {
      const body: unknown = ctx.oidc.body;
      const admission = admitSelfRegistration(
        typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {},
      );
      if (!admission.isAdmitted) {
        throw parts.refusal(admission.refusal);
      }
      (ctx.oidc as { body: unknown }).body = {
        ...admission.metadata,
        id_token_signed_response_alg: parts.idTokenAlgorithm,
      };
      return parts.newClientId();
    },
    secretFactory: () => parts.newClientSecret(),
  };
}
