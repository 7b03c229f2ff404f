/**
 * The texts of the OpenID provider's operations and pages, in the interface's language. The
 * admin API answers with them and the admin CLI prints them. Listed in docs/api.md.
 */
export const OAuthServerMessages = {
  badClientName:
    'El nombre del cliente debe tener entre 1 y 100 caracteres, sin caracteres de control ni invisibles.',
  noRedirectUris: 'Indique al menos una URI de redirección.',
  tooManyRedirectUris: 'Se admiten como máximo 10 URI de redirección de cada tipo por cliente.',
  badRedirectUri:
    'Las URI de redirección deben ser absolutas: https, http solo en loopback o un esquema privado con punto; sin usuario, contraseña ni fragmento y de 2048 caracteres como máximo.',
  unknownScopes:
    'Alcance desconocido: los alcances posibles son openid, profile, email y offline_access.',
  unknownClient: 'Cliente OAuth no encontrado.',
  publicClientSecret: 'Un cliente público no tiene secreto que renovar.',
} as const;
