/** The texts of passkeys (beyond the interface), in the style of the interface's own. */
export const PasskeysMessages = {
  unavailable: 'Las llaves de acceso no están configuradas.',
  challengeInvalid: 'El desafío de la llave de acceso no es válido o ya se usó.',
  verificationFailed: 'No se pudo verificar la llave de acceso.',
  unknownPasskey: 'Llave de acceso no reconocida.',
  counterRegressed: 'Llave de acceso rechazada: su contador de firmas retrocedió.',
  alreadyRegistered: 'Esta llave de acceso ya está registrada.',
  notFound: 'Llave de acceso no encontrada.',
  proofRequired: 'Se requiere la contraseña o una llave de acceso.',
  proofAmbiguous: 'Envía la contraseña o una llave de acceso, no ambas.',
  tooMany: 'La cuenta ya tiene el máximo de 20 llaves de acceso.',
} as const;
