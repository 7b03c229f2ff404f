/** The texts of the account routes: e-mail verification and change, deletion. */
export const AccountMessages = {
  emailVerified: 'Email verificado exitosamente.',
  verificationRequested: 'Te enviaremos un enlace de verificación.',
  emailAlreadyVerified: 'El email ya está verificado.',
  emailChangeRequested: 'Te enviaremos un enlace de confirmación a la nueva dirección.',
  sameEmail: 'El nuevo email es igual al actual.',
  emailChanged: 'Email actualizado exitosamente.',
  accountDeleted: 'Cuenta eliminada exitosamente.',
} as const;
