/** The texts of passwords: the interface's login failures and the password routes' answers. */
export const PasswordsMessages = {
  invalidCredentials: 'Credenciales inválidas.',
  lockedOut: (minutes: number) =>
    `Cuenta bloqueada temporalmente. Intenta en ${minutes} minuto(s).`,
  passwordChanged: 'Contraseña actualizada exitosamente.',
  samePassword: 'La nueva contraseña debe ser distinta de la actual.',
  resetRequested:
    'Si existe una cuenta con ese email, recibirás un enlace para restablecer la contraseña.',
  passwordReset: 'Contraseña restablecida exitosamente.',
  /** Stored as the revocation reason of the sessions a new password ends. */
  passwordChangedReason: 'Password changed',
  passwordResetReason: 'Password reset',
} as const;
