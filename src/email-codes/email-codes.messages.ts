/** The texts of sign-in with a mailed code (beyond the interface), in the interface's style. */
export const EmailCodesMessages = {
  codeRequested: 'Si existe una cuenta con ese email, recibirás un código para iniciar sesión.',
  invalidCode: 'Código inválido o expirado.',
  disabled: 'El inicio de sesión con código por email no está activado.',
} as const;
