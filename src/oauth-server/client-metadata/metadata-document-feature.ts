import type { Configuration } from 'oidc-provider';
import { isAcceptableMetadataDocumentClient } from '../registration/self-registration-rules.js';

type MetadataDocumentFeature = NonNullable<
  NonNullable<Configuration['features']>['clientIdMetadataDocument']
>;

/** The version of the draft the library implements, which it asks to be acknowledged. */
const DRAFT = 'draft-02';

/**
 * How long a fetched document is used before it is fetched again, in seconds: as its
 * Cache-Control max-age or Expires says, within these bounds (a minute, a day). Without either
 * header: the minimum.
 */
export const METADATA_DOCUMENT_CACHE_SECONDS = { min: 60, max: 24 * 60 * 60 } as const;

/**
 * The longest client id: a metadata document's URL longer than this is not fetched (the
 * consents table keeps a client id in as many characters, the bound of a redirect URI here).
 */
export const OAUTH_CLIENT_ID_MAX_LENGTH = 2048;

/** A client metadata document larger than this is refused. */
export const METADATA_DOCUMENT_LIMIT_BYTES = 5 * 1024;

/**
 * Client ID metadata documents through the library's `features.clientIdMetadataDocument`: an
 * `https` URL as `client_id` is fetched (with Keygate's guarded fetch, provider-configuration.ts),
 * its `client_id` must be that URL (the library's check), and the client it describes must pass
 * Keygate's redirect rule (self-registration-rules.ts) every time it is used. Such a client is
 * not stored: the library keeps it in its cache, as long as the bounds above allow.
 */
export function metadataDocumentFeature(enabled: boolean): MetadataDocumentFeature {
  if (!enabled) {
    return { enabled: false };
  }
  return {
    enabled: true,
    ack: DRAFT,
    allowFetch: (_ctx, url) => url.length <= OAUTH_CLIENT_ID_MAX_LENGTH,
    allowClient: (_ctx, client) => isAcceptableMetadataDocumentClient(client),
    cacheDuration: { ...METADATA_DOCUMENT_CACHE_SECONDS },
  };
}
