/** The command line is wrong: exit code 2, and the message says how. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
