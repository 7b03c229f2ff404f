/** The texts of the second factor (beyond the interface), in the style of the interface's own. */
export const MfaMessages = {
  codeRequired: 'Se requiere el código de verificación.',
  invalidCode: 'Código de verificación inválido.',
  alreadyEnabled: 'La verificación en dos pasos ya está activada.',
  notPending: 'No hay una verificación en dos pasos pendiente de confirmar.',
  notEnabled: 'La verificación en dos pasos no está activada.',
  disabled: 'Verificación en dos pasos desactivada.',
  unavailable: 'La verificación en dos pasos no está configurada.',
  /** Stored as the revocation reason of the sessions that turning the factor on ends. */
  enabledReason: 'Two-factor authentication enabled',
} as const;
