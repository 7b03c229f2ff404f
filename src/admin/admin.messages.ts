/** Texts of the admin CLI, which operators read; the API's own texts are in the SPEC's language. */
export const AdminMessages = {
  unknownUser: (email: string) => `No account has the e-mail ${email}.`,
  auditLimitOutOfRange: (min: number, max: number) =>
    `The audit limit must be a whole number from ${min} to ${max}.`,
  /** Stored as the revocation reason of the tokens each command revokes. */
  deactivatedReason: 'Account deactivated by an administrator',
  revokedReason: 'Sessions revoked by an administrator',
} as const;
