import type { ArgumentMetadata } from '@nestjs/common';
import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { LoginDto } from '../../auth/dto/login.dto.js';
import { RegisterDto } from '../../auth/dto/register.dto.js';
import { RequestValidationError } from '../errors/request-validation.error.js';
import { AppValidationPipe } from './validation.pipe.js';

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
    // `code` is LoginDto's own optional field (the second factor), left undefined.
    expect(Object.keys(result as object).sort()).toEqual(['code', 'email', 'password']);
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
