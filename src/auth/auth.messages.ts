export const AuthMessages = {
  invalidCredentials: 'Credenciales inválidas.',
  lockedOut: (minutes: number) =>
    `Cuenta bloqueada temporalmente. Intenta en ${minutes} minuto(s).`,
  passwordChanged: 'Contraseña actualizada exitosamente.',
  samePassword: 'La nueva contraseña debe ser distinta de la actual.',
  resetRequested:
    'Si existe una cuenta con ese email, recibirás un enlace para restablecer la contraseña.',
  passwordReset: 'Contraseña restablecida exitosamente.',
  mailedTokenInvalid: 'Token inválido o expirado.',
  emailVerified: 'Email verificado exitosamente.',
  verificationRequested: 'Te enviaremos un enlace de verificación.',
  emailAlreadyVerified: 'El email ya está verificado.',
  emailChangeRequested: 'Te enviaremos un enlace de confirmación a la nueva dirección.',
  sameEmail: 'El nuevo email es igual al actual.',
  emailChanged: 'Email actualizado exitosamente.',
  accountDeleted: 'Cuenta eliminada exitosamente.',
  /** Stored as the revocation reason of the sessions a new password ends. */
  passwordChangedReason: 'Password changed',
  passwordResetReason: 'Password reset',
} as const;
