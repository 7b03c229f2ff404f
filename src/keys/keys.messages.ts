/** The texts of the key set's refusals (beyond the interface), in the style of the interface's own. */
export const KeysMessages = {
  notFound: 'Clave de firma no encontrada.',
  alreadyRetired: 'La clave de firma ya está retirada.',
  alreadyExists: 'La clave de firma ya existe.',
  nextKeyWaiting: 'Ya hay una clave de firma siguiente publicada.',
  secretSigns: 'El secreto HS256 firma los tokens: no se puede retirar.',
  symmetricAlgorithm:
    'Las claves de firma necesitan un algoritmo asimétrico en Jwt__SigningAlgorithm.',
  notAPrivateKey: 'El archivo no contiene una clave privada PEM sin cifrar.',
  unsupportedKey: 'Tipo de clave no admitido: se aceptan P-256, Ed25519 y RSA.',
  rsaTooShort: 'La clave RSA debe tener al menos 2048 bits.',
  algorithmMismatch: 'La clave no firma con el algoritmo de Jwt__SigningAlgorithm.',
} as const;
