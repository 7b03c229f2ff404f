import { SESSION_RESPONSE_EXAMPLE, SessionResponseDto } from './session-response.dto.js';

export class SessionListResponseDto {
  /** The active sessions, most recently used first. */
  readonly sessions: SessionResponseDto[];
}

/** Two sessions of the example user: this browser's, and a phone's. */
export const SESSION_LIST_EXAMPLE: SessionListResponseDto = {
  sessions: [
    SESSION_RESPONSE_EXAMPLE,
    {
      id: '1c7f2d9a-5e3b-4b8c-a1d6-7e0f9b2c4a38',
      createdAt: '2025-12-20T08:12:03.000Z',
      lastUsedAt: '2026-01-02T07:30:41.120Z',
      ip: '198.51.100.23',
      userAgent: null,
      current: false,
    },
  ],
};
