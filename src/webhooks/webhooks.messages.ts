/** Texts of the webhook commands, which operators read (as the admin CLI's own, in English). */
export const WebhooksMessages = {
  notConfigured:
    'Webhooks__EncryptionKeys is not configured: subscription secrets cannot be stored encrypted.',
  badUrl:
    'The URL must be an absolute http or https URL, without user name, password or fragment, of at most 2048 characters.',
  privateDestination:
    'The URL names a private, loopback or link-local address; set Webhooks__AllowPrivateDestinations=true to allow it.',
  noEvents: 'Name the event types to send, comma-separated, or "all".',
  unknownEvents: (types: readonly string[]) =>
    `Unknown event type(s): ${types.join(', ')}. See docs/webhooks.md for the catalogue.`,
  unknownSubscription: (id: string) => `No webhook subscription has the id ${id}.`,
  unknownDeadDelivery: (id: string) => `No dead webhook delivery has the id ${id}.`,
} as const;
