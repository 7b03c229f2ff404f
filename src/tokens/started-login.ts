import type { AuthMethod } from './auth-methods.js';
import type { AuthResponseDto } from './dto/auth-response.dto.js';

/**
 * A sign-in that succeeded (password, mailed code, passkey): its answer, the session it started
 * and how it was authenticated. What a sign-in that is not an API call needs (the OpenID
 * provider's hosted page ties its browser session to that session).
 */
export interface StartedLogin {
  readonly response: AuthResponseDto;
  readonly sessionId: string;
  readonly authMethods: readonly AuthMethod[];
}
