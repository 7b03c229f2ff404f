/** The key that signs access tokens, as metrics see it: no key material. */
export interface SigningKeyInUse {
  readonly algorithm: string;
  readonly createdAt: Date;
}

/**
 * Told, once the key set is first read, how to find the key that signs and when it was made, so
 * metrics can report its age without the key set knowing about them. Optional: the admin CLI has
 * none.
 */
export abstract class SigningKeyObserver {
  /** `current` answers the key that signs, or null while the HS256 secret signs. */
  abstract watch(current: () => SigningKeyInUse | null): void;
}
