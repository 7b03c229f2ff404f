/** The texts of sign-in through other identity providers, in the style of the interface's own. */
export const FederationMessages = {
  unknownProvider: 'Proveedor de identidad no encontrado.',
  redirectNotAllowed: 'La URL de retorno no está permitida.',
  invalidFlow: 'El inicio de sesión con el proveedor no es válido o ya se usó.',
  invalidCode: 'Código de inicio de sesión inválido o expirado.',
  providerUnavailable: 'El proveedor de identidad no responde. Intenta más tarde.',
  identityNotFound: 'Identidad vinculada no encontrada.',
  lastWayToSignIn: 'No puedes quitar la única forma de iniciar sesión de la cuenta.',
} as const;
