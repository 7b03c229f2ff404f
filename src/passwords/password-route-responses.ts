import { HttpStatus } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse } from '@nestjs/swagger';
import { AccountTokensMessages } from '../account-tokens/account-tokens.messages.js';
import { MailMessages } from '../mail/mail.messages.js';
import { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import { FRESH_LOCKOUT_MINUTES } from './lockout.js';
import { PasswordsMessages } from './passwords.messages.js';

// The documented answers shared by the password routes and the account routes.

/** A success answer: what it means, and its message as the one example. */
export function answers(
  status: 200 | 202,
  description: string,
  example: { readonly name: string; readonly message: string },
): MethodDecorator {
  const options = {
    description,
    type: MessageResponseDto,
    examples: { [example.name]: { summary: example.message, value: { message: example.message } } },
  };
  return status === 200 ? ApiOkResponse(options) : ApiAcceptedResponse(options);
}

/** The refusals of a route that asks for the password again (PasswordConfirmation). */
export const PASSWORD_REFUSALS = {
  status: HttpStatus.UNAUTHORIZED,
  messages: {
    invalidCredentials: PasswordsMessages.invalidCredentials,
    deactivated: UsersMessages.deactivated,
    lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
  },
} as const;
/** The refusal of a route that a deactivated account cannot use. */
export const DEACTIVATED = {
  status: HttpStatus.UNAUTHORIZED,
  messages: { deactivated: UsersMessages.deactivated },
} as const;
/** A mailed link's token that is unknown, used, expired or replaced. */
export const MAILED_TOKEN_REFUSED = {
  status: HttpStatus.BAD_REQUEST,
  messages: { mailedTokenInvalid: AccountTokensMessages.mailedTokenInvalid },
} as const;
export const USER_NOT_FOUND = {
  status: HttpStatus.NOT_FOUND,
  messages: { notFound: UsersMessages.notFound },
} as const;
export const MAIL_UNAVAILABLE = {
  status: HttpStatus.SERVICE_UNAVAILABLE,
  messages: { mailUnavailable: MailMessages.unavailable },
} as const;
