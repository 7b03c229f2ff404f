/** The text of a mailed link's token that cannot be used (reset, verification, e-mail change). */
export const AccountTokensMessages = {
  mailedTokenInvalid: 'Token inválido o expirado.',
} as const;
