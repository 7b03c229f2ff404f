export const MailMessages = {
  unavailable: 'El envío de correos no está configurado.',
} as const;
