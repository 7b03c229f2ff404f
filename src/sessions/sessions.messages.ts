export const SessionsMessages = {
  revokedAll: 'Sesiones revocadas exitosamente.',
  revokeAllReason: 'All sessions revoked by user',
} as const;
