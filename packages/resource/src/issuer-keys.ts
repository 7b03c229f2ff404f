import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { IssuerUnavailableError } from './errors.js';
import { parseServerUrl } from './resource-uri.js';

/** How long a request for the issuer's metadata may take. */
const METADATA_TIMEOUT_MS = 5_000;
/** An authorization server's metadata is a few kilobytes; anything past this is refused. */
const METADATA_MAX_BYTES = 256 * 1024;
/** After a failed discovery, tokens are answered from that failure for this long, not re-asked. */
const DISCOVERY_RETRY_MS = 30_000;

/**
 * jose's remote key set: fetched on first use, kept 10 minutes, fetched again at most once per
 * 30 seconds when a token names a key it does not hold (a key rotated in since), 5 s per fetch,
 * no redirects.
 */
const KEY_SET_OPTIONS = { cacheMaxAge: 600_000, cooldownDuration: 30_000, timeoutDuration: 5_000 };

const keySets = new Map<string, Promise<JWTVerifyGetKey>>();
const failures = new Map<string, { at: number; error: IssuerUnavailableError }>();

/**
 * The key resolver for tokens of `issuer`, one per issuer and key set URL for the life of the
 * process: from `jwksUri` when given, else from the `jwks_uri` of the issuer's metadata.
 */
export function issuerKeys(issuer: string, jwksUri: string | undefined): Promise<JWTVerifyGetKey> {
  const cacheKey = `${issuer} ${jwksUri ?? ''}`;
  const cached = keySets.get(cacheKey);
  if (cached !== undefined) {
    return cached;
  }
  const failure = failures.get(cacheKey);
  if (failure !== undefined && Date.now() - failure.at < DISCOVERY_RETRY_MS) {
    return Promise.reject(failure.error);
  }
  const located = jwksUri !== undefined ? Promise.resolve(jwksUri) : discoverJwksUri(issuer);
  const resolving = located.then(
    (uri) => guarded(createRemoteJWKSet(parseServerUrl(uri, 'jwks_uri'), KEY_SET_OPTIONS), uri),
    (error: unknown) => {
      const unavailable =
        error instanceof IssuerUnavailableError
          ? error
          : new IssuerUnavailableError(`${issuer}'s key set could not be located.`, {
              cause: error,
            });
      keySets.delete(cacheKey);
      failures.set(cacheKey, { at: Date.now(), error: unavailable });
      throw unavailable;
    },
  );
  keySets.set(cacheKey, resolving);
  return resolving;
}

/**
 * Where RFC 8414 §3.1 and OpenID Connect Discovery put the metadata of `issuer`, in the order the
 * MCP specification has clients try them: `oauth-authorization-server` then
 * `openid-configuration` inserted before the issuer's path, then `openid-configuration` after it.
 */
export function metadataUrls(issuer: URL): string[] {
  const path = issuer.pathname.replace(/\/$/, '');
  const urls = [
    `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path !== '') {
    urls.push(`${issuer.origin}${path}/.well-known/openid-configuration`);
  }
  return urls;
}

async function discoverJwksUri(issuer: string): Promise<string> {
  for (const url of metadataUrls(new URL(issuer))) {
    const metadata = await fetchMetadata(url);
    if (metadata === undefined) {
      continue;
    }
    // RFC 8414 §3.3: the metadata must name the very issuer it was asked for.
    if (metadata.issuer !== issuer) {
      throw new IssuerUnavailableError(
        `${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}.`,
      );
    }
    if (typeof metadata.jwks_uri !== 'string') {
      throw new IssuerUnavailableError(`${url} has no jwks_uri.`);
    }
    try {
      return parseServerUrl(metadata.jwks_uri, 'jwks_uri').href;
    } catch (error) {
      throw new IssuerUnavailableError(`${url} has an unusable jwks_uri.`, { cause: error });
    }
  }
  throw new IssuerUnavailableError(
    `${issuer} publishes no authorization server metadata; pass jwksUri instead.`,
  );
}

/** The JSON object at `url`; undefined when there is none (404). */
async function fetchMetadata(url: string): Promise<Record<string, unknown> | undefined> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
    });
  } catch (error) {
    throw new IssuerUnavailableError(`${url} could not be fetched.`, { cause: error });
  }
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new IssuerUnavailableError(`${url} answered ${response.status}.`);
  }
  const text = await readBounded(response, url);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new IssuerUnavailableError(`${url} is not JSON.`, { cause: error });
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new IssuerUnavailableError(`${url} is not a JSON object.`);
  }
  return document as Record<string, unknown>;
}

async function readBounded(response: Response, url: string): Promise<string> {
  if (response.body === null) {
    return '';
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      size += next.value.byteLength;
      if (size > METADATA_MAX_BYTES) {
        await reader.cancel();
        throw new IssuerUnavailableError(`${url} is larger than ${METADATA_MAX_BYTES} bytes.`);
      }
      chunks.push(next.value);
    }
  } catch (error) {
    throw error instanceof IssuerUnavailableError
      ? error
      : new IssuerUnavailableError(`${url} could not be read.`, { cause: error });
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * The key set's resolver, its failures sorted: a token naming no key it holds (or an ambiguous
 * one) is the token's fault; anything else (unreachable, slow, not a key set) the issuer's.
 */
function guarded(keys: JWTVerifyGetKey, uri: string): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await keys(header, token);
    } catch (error) {
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys
      ) {
        throw error;
      }
      throw new IssuerUnavailableError(`The key set at ${uri} could not be read.`, {
        cause: error,
      });
    }
  };
}
