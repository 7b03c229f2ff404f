/**
 * The refusals of the webhook operations, in the interface's language: the admin API answers with
 * them and the admin CLI prints them (as it prints the key set's). Listed in docs/api.md.
 */
export const WebhooksMessages = {
  notConfigured:
    'Webhooks__EncryptionKeys no está configurado: los secretos de las suscripciones no se pueden guardar cifrados.',
  badUrl:
    'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
  privateDestination:
    'La URL apunta a una dirección privada, de loopback o de enlace local; Webhooks__AllowPrivateDestinations=true la permite.',
  noEvents: 'Indique los tipos de evento que se envían, separados por comas, o "all".',
  unknownEvents: 'Tipo de evento desconocido: el catálogo está en docs/webhooks.md.',
  unknownSubscription: 'Suscripción de webhook no encontrada.',
  unknownDeadDelivery: 'Entrega de webhook fallida no encontrada.',
} as const;
