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
  unknownGrantTypes:
    'Tipo de concesión desconocido: los tipos posibles son authorization_code, device_code y client_credentials.',
  publicClientGrant:
    'Un cliente público no puede usar client_credentials: solo los clientes confidenciales tienen credenciales.',
  redirectsWithoutCode: 'Solo un cliente con authorization_code tiene URI de redirección.',
  unknownClient: 'Cliente OAuth no encontrado.',
  publicClientSecret: 'Un cliente público no tiene secreto que renovar.',
  unknownGrant: 'No ha autorizado a esa aplicación.',
  unknownConsentRequest: 'Solicitud de consentimiento no encontrada, caducada o ya resuelta.',
  /** The hosted pages (src/oauth-server/pages): an application's request the provider refuses. */
  refusedRequest:
    'La aplicación envió una solicitud que no se puede atender; no se le devuelve a ella.',
  interactionExpired:
    'La solicitud de inicio de sesión caducó o no es válida. Vuelva a la aplicación e inténtelo de nuevo.',
  formRefused:
    'El formulario no es válido o caducó. Vuelva a cargar la página e inténtelo de nuevo.',
  missingCredentials: 'Indique su correo electrónico y su contraseña.',
  /** The hosted sign-in page's mailed code: an address that cannot be one. */
  invalidEmail: 'Indique una dirección de correo electrónico válida.',
  /** The hosted sign-in page's passkey: the browser made no assertion (cancelled, none there). */
  passkeyFailed:
    'No se usó ninguna llave de acceso. Inténtelo de nuevo o inicie sesión con su contraseña.',
  /** The consent page of a client that registered itself (issue 40). */
  unverifiedClient:
    'Aplicación no verificada: se registró por sí misma y Keygate no sabe quién la publica. Permita el acceso solo si la reconoce.',
  localhostOnlyClient:
    'Esta aplicación solo vuelve a este mismo equipo (localhost): permita el acceso solo si acaba de iniciarla usted.',
  /** The device pages (RFC 8628): the user code a person types. */
  deviceCodeMissing: 'Indique el código que muestra su dispositivo.',
  deviceCodeWrong:
    'El código no es válido, caducó o ya se usó. Compruébelo en su dispositivo e inténtelo de nuevo.',
  deviceCodeThrottled:
    'Demasiados códigos incorrectos desde esta dirección. Espere unos minutos e inténtelo de nuevo.',
  deviceAborted: 'Se canceló la conexión del dispositivo. Puede cerrar esta página.',
  deviceFailed:
    'No se pudo completar la conexión del dispositivo. Vuelva a empezar desde el dispositivo.',
  /** What each scope lets an application do, as the consent page lists it. */
  scopeOpenid: 'Confirmar su identidad con el identificador de su cuenta.',
  scopeProfile: 'Ver su nombre de usuario.',
  scopeEmail: 'Ver su dirección de correo electrónico y si está verificada.',
  scopeOfflineAccess: 'Seguir accediendo a su cuenta cuando usted no esté presente.',
} as const;
