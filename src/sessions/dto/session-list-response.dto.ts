import { SessionResponseDto } from './session-response.dto.js';

export class SessionListResponseDto {
  /** The active sessions, most recently used first. */
  readonly sessions: SessionResponseDto[];
}
