import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString } from 'class-validator';
import {
  HasNoControlCharacters,
  HasNoInvisibleCharacters,
  MaxChars,
  Trim,
} from '../../common/validation/string-rules.js';
import { PASSKEY_NAME_MAX_LENGTH } from '../entities/passkey.entity.js';

/** A passkey's name as its owner gives it: trimmed, shown back in lists. */
export function PasskeyName(): PropertyDecorator {
  return applyDecorators(
    Trim(),
    IsString(),
    IsNotEmpty(),
    MaxChars(PASSKEY_NAME_MAX_LENGTH),
    HasNoControlCharacters(),
    HasNoInvisibleCharacters(),
  );
}
