/**
 * Told, once the key set is first read, how to find the creation time of the key that signs, so
 * metrics can report its age without the key set knowing about them. Optional: the admin CLI has
 * none.
 */
export abstract class SigningKeyObserver {
  /** `createdAtOfCurrent` answers null while the HS256 secret signs. */
  abstract watch(createdAtOfCurrent: () => Date | null): void;
}
