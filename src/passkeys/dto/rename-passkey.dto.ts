import { PasskeyName } from './passkey-name.js';

export class RenamePasskeyDto {
  /** The new name, trimmed. @example "Teléfono" */
  @PasskeyName()
  readonly name: string;
}
