import { jest } from '@jest/globals';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { LoginDto } from '../../auth/dto/login.dto.js';
import { RegisterDto } from '../../auth/dto/register.dto.js';
import { RequestValidationError } from '../errors/request-validation.error.js';
import { REFRESH_TOKEN_MAX_LENGTH, RefreshDto } from '../../tokens/dto/refresh.dto.js';
import { AcceptsValidBodies, AppValidationPipe } from './validation.pipe.js';

class AddressDto {
  @IsString()
  readonly city: string;
}

class ProfileDto {
  @IsString()
  readonly name: string;

  @IsInt()
  @Min(0)
  readonly age: number;

  @ValidateNested()
  @Type(() => AddressDto)
  readonly address: AddressDto;
}

const bodyOf = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({
  type: 'body',
  metatype,
  data: undefined,
});

async function validationErrorOf(promise: Promise<unknown>): Promise<RequestValidationError> {
  try {
    await promise;
  } catch (error: unknown) {
    if (error instanceof RequestValidationError) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a RequestValidationError, but the value passed');
}

describe(AppValidationPipe.name, () => {
  let sut: AppValidationPipe;

  beforeEach(() => {
    sut = new AppValidationPipe();
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an array', [{ email: 'alice@example.com', password: 'S3cure!pass' }]],
    ['an empty array', []],
    ['a string', 'alice@example.com'],
    ['a number', 42],
    ['a boolean', true],
  ])('should reject %s as a body with an error on "$"', async (_label, body) => {
    const error = await validationErrorOf(sut.transform(body, bodyOf(LoginDto)));

    expect(error.errors).toEqual({ $: ['The request body must be a JSON object.'] });
  });

  it('should reject a body that is an instance of some class rather than a plain object', async () => {
    const error = await validationErrorOf(sut.transform(new Date(), bodyOf(LoginDto)));

    expect(Object.keys(error.errors)).toEqual(['$']);
  });

  it('should map each failing field to all of its messages', async () => {
    const error = await validationErrorOf(
      sut.transform(
        { username: '', email: 'not-an-email', password: 'short' },
        bodyOf(RegisterDto),
      ),
    );

    expect(Object.keys(error.errors).sort()).toEqual(['email', 'password', 'username']);
    expect(error.errors.email).toEqual(['email must be an email']);
    expect(error.errors.username).toEqual(['username should not be empty']);
    expect([...error.errors.password].sort()).toEqual(
      [
        'password must be at least 8 characters long',
        'password must contain an uppercase letter',
        'password must contain a digit',
        'password must contain a special character',
      ].sort(),
    );
  });

  it('should report missing required fields', async () => {
    const error = await validationErrorOf(sut.transform({}, bodyOf(LoginDto)));

    expect(Object.keys(error.errors).sort()).toEqual(['email', 'password']);
    expect(error.errors.email).toEqual(
      expect.arrayContaining(['email must be a string', 'email should not be empty']),
    );
  });

  it('should name nested fields with a dotted path', async () => {
    const error = await validationErrorOf(
      sut.transform({ name: 'Alice', age: -1, address: { city: 7 } }, bodyOf(ProfileDto)),
    );

    expect(error.errors).toEqual({
      age: ['age must not be less than 0'],
      'address.city': ['city must be a string'],
    });
  });

  it('should never put the rejected values in the error', async () => {
    const error = await validationErrorOf(
      sut.transform({ email: 'alice@example.com', password: 12345 }, bodyOf(LoginDto)),
    );

    expect(JSON.stringify(error.errors)).not.toContain('12345');
    expect(JSON.stringify(error.errors)).not.toContain('alice@example.com');
  });

  it('should strip unknown properties and return an instance of the DTO', async () => {
    const result = await sut.transform(
      { email: 'alice@example.com', password: 'S3cure!pass', isAdmin: true, role: 'root' },
      bodyOf(LoginDto),
    );

    expect(result).toBeInstanceOf(LoginDto);
    expect(result).toEqual({ email: 'alice@example.com', password: 'S3cure!pass' });
    // `code` and `passkey` are LoginDto's own optional fields (the second step), left undefined.
    expect(Object.keys(result as object).sort()).toEqual(['code', 'email', 'passkey', 'password']);
  });

  it('should apply the DTO transformations (trimmed e-mail, untouched password)', async () => {
    const result = await sut.transform(
      { username: ' alice ', email: ' alice@example.com ', password: ' S3cure!pass ' },
      bodyOf(RegisterDto),
    );

    expect(result).toEqual({
      username: 'alice',
      email: 'alice@example.com',
      password: ' S3cure!pass ',
    });
  });

  it('should not apply the body rule to route parameters', async () => {
    await expect(
      sut.transform('abc', { type: 'param', metatype: String, data: 'id' }),
    ).resolves.toBe('abc');
  });
});

/** What a body becomes: the DTO the handler receives, or the fields and messages of the 400. */
async function outcomeOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await run();
    return { accepted: value, isDto: value instanceof RefreshDto };
  } catch (error: unknown) {
    if (error instanceof RequestValidationError) {
      return { refused: error.errors };
    }
    throw error;
  }
}

describe(AcceptsValidBodies.name, () => {
  const metadata = bodyOf(RefreshDto);
  /** The same rules without the fast path: class-validator reads them from the parent class. */
  class FullPathRefreshDto extends RefreshDto {}
  const fullPath = (body: unknown) => () =>
    new AppValidationPipe().transform(body, bodyOf(FullPathRefreshDto));
  const withFastPath = (body: unknown) => () => new AppValidationPipe().transform(body, metadata);

  const TOKEN = 'kq3V0S2yq8m1bZcR5x0G6uUj4tQnH7wEoLdP9aFsYiM';
  const bodies: [string, unknown][] = [
    ['a token', { refreshToken: TOKEN }],
    ['a token and unknown fields', { refreshToken: TOKEN, extra: 1, reason: 'x' }],
    ['one character', { refreshToken: 'x' }],
    ['512 characters', { refreshToken: 'a'.repeat(REFRESH_TOKEN_MAX_LENGTH) }],
    ['513 characters', { refreshToken: 'a'.repeat(REFRESH_TOKEN_MAX_LENGTH + 1) }],
    ['512 emoji (1,024 UTF-16 units)', { refreshToken: '😀'.repeat(REFRESH_TOKEN_MAX_LENGTH) }],
    ['513 emoji', { refreshToken: '😀'.repeat(REFRESH_TOKEN_MAX_LENGTH + 1) }],
    ['white space', { refreshToken: ' ' }],
    ['control characters', { refreshToken: 'a\u0000b' }],
    ['an empty string', { refreshToken: '' }],
    ['null', { refreshToken: null }],
    ['a number', { refreshToken: 42 }],
    ['a boolean', { refreshToken: true }],
    ['an array', { refreshToken: [TOKEN] }],
    ['an object', { refreshToken: { value: TOKEN } }],
    ['no field', {}],
    ['another field only', { token: TOKEN }],
    [
      'a null-prototype object',
      Object.assign(Object.create(null) as object, { refreshToken: TOKEN }),
    ],
    ['undefined', undefined],
    ['null as the body', null],
    ['an array as the body', [{ refreshToken: TOKEN }]],
    ['a string as the body', TOKEN],
  ];

  it.each(bodies)('should answer a body with %s as the full path does', async (_label, body) => {
    const expected = await outcomeOf(fullPath(body));

    await expect(outcomeOf(withFastPath(body))).resolves.toEqual(expected);
  });

  it('should accept random strings exactly when the full path does, with the same DTO', async () => {
    const alphabet = ['a', 'Z', '0', '-', '_', ' ', '\u0000', 'é', '😀', '\u202e'];
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 200; i++) {
      const length = [0, 1, 43, 511, 512, 513, 600][next(7)];
      const value = Array.from({ length }, () => alphabet[next(alphabet.length)]).join('');
      const body = { refreshToken: value };

      await expect(outcomeOf(withFastPath(body))).resolves.toEqual(await outcomeOf(fullPath(body)));
    }
  });

  it('should let the full path through when it does not accept a body', async () => {
    const transform = jest.spyOn(ValidationPipe.prototype, 'transform');

    await new AppValidationPipe().transform({ refreshToken: TOKEN }, metadata).catch(() => null);
    expect(transform).not.toHaveBeenCalled();
    await new AppValidationPipe().transform({ refreshToken: '' }, metadata).catch(() => null);
    expect(transform).toHaveBeenCalledTimes(1);
    transform.mockRestore();
  });
});
