export const TokensMessages = {
  invalid: 'Refresh token inválido.',
  revoked: 'Refresh token revocado.',
  expired: 'Refresh token expirado.',
  revokedOk: 'Token revocado exitosamente.',
  reuseDetectedReason: 'Token reuse detectado',
  replacedReason: 'Replaced by new token',
  defaultRevokeReason: 'Revoked by user',
  sessionLimitReason: 'Session limit reached',
} as const;
