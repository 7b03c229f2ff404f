/**
 * Matchers for whole response bodies. Message texts are written out literally from the interface
 * (docs/api.md), not imported from the *.messages.ts constants, so a typo in a constant fails a
 * test.
 */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** The error body of SPEC §2.4 with its exact status and message. */
export function errorBody(status: number, message: string): Record<string, unknown> {
  return { status, message, timestamp: expect.stringMatching(ISO_UTC) };
}

/** SPEC §7: missing or invalid bearer token. Exactly these two fields, no timestamp. */
export const UNAUTHORIZED_BODY = { status: 401, message: 'Unauthorized' };

/** What a client reads of a 401: its status, its body as sent, and its RFC 6750 challenge. */
export function challengeOf(response: {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}): { status: number; body: string; challenge: string | null } {
  return {
    status: response.status,
    body: response.text,
    challenge: response.headers.get('www-authenticate'),
  };
}

/** The bearer guard's refusal as challengeOf reads it: SPEC §7's bare 401 and the challenge. */
export function bearerRefusal(challenge: string): ReturnType<typeof challengeOf> {
  return { status: 401, body: JSON.stringify(UNAUTHORIZED_BODY), challenge };
}

/** SPEC §7: the problem-details body, with the fields that must carry errors. */
export function problemDetails(fields: readonly string[]): Record<string, unknown> {
  return {
    type: expect.any(String),
    title: 'One or more validation errors occurred.',
    status: 400,
    errors: Object.fromEntries(
      fields.map((field) => [field, expect.arrayContaining([expect.any(String)])]),
    ),
  };
}

/** SPEC §2.3: the auth response for a given user. */
export function authResponse(user: { username: string; email: string }): Record<string, unknown> {
  return {
    accessToken: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    refreshToken: expect.stringMatching(/^[\w-]{43,}$/),
    accessTokenExpiry: expect.stringMatching(ISO_UTC),
    user: publicUser(user),
  };
}

/** SPEC §2.1: the public user representation, and nothing else. */
export function publicUser(user: { username: string; email: string }): Record<string, unknown> {
  return {
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    username: user.username,
    email: user.email,
    createdAt: expect.stringMatching(ISO_UTC),
  };
}
