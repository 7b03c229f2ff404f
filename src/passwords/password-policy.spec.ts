import { validate } from 'class-validator';
import {
  IsAcceptablePassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PASSWORD_RULES,
} from './password-policy.js';

class PasswordHolder {
  @IsAcceptablePassword()
  password: unknown;
}

async function brokenRules(password: unknown): Promise<string[]> {
  const holder = new PasswordHolder();
  holder.password = password;
  const errors = await validate(holder);
  return errors.flatMap((error) => Object.keys(error.constraints ?? {})).sort();
}

const emoji = '\u{1F600}';

describe(IsAcceptablePassword.name, () => {
  it('should define the rules of spec 4.1 with the limits 8 and 128', () => {
    expect(PASSWORD_MIN_LENGTH).toBe(8);
    expect(PASSWORD_MAX_LENGTH).toBe(128);
    expect(PASSWORD_RULES.map((rule) => rule.name)).toEqual([
      'passwordMinLength',
      'passwordMaxLength',
      'passwordUppercase',
      'passwordLowercase',
      'passwordDigit',
      'passwordSpecial',
    ]);
  });

  it.each([
    ['a typical strong password', 'S3cure!pass'],
    ['exactly 8 characters', 'Aa1!aaaa'],
    ['a space as the special character', 'Aa1 aaaa'],
    ['non-ASCII letters', 'Ñandú12!'],
    ['exactly 128 characters', `Aa1!${'a'.repeat(124)}`],
    ['8 code points made of 3 letters/digits and 5 emoji', `Aa1${emoji.repeat(5)}`],
    ['128 code points of which 124 are emoji', `Aa1!${emoji.repeat(124)}`],
  ])('should accept %s', async (_label, password) => {
    await expect(brokenRules(password)).resolves.toEqual([]);
  });

  it.each([
    ['7 characters', 'Aa1!aaa', ['passwordMinLength']],
    ['129 characters', `Aa1!${'a'.repeat(125)}`, ['passwordMaxLength']],
    ['no uppercase letter', 's3cure!pass', ['passwordUppercase']],
    ['no lowercase letter', 'S3CURE!PASS', ['passwordLowercase']],
    ['no digit', 'Secure!pass', ['passwordDigit']],
    ['no special character', 'S3curepass', ['passwordSpecial']],
    [
      'only lowercase letters',
      'password',
      ['passwordDigit', 'passwordSpecial', 'passwordUppercase'],
    ],
    [
      'an empty string',
      '',
      [
        'passwordDigit',
        'passwordLowercase',
        'passwordMinLength',
        'passwordSpecial',
        'passwordUppercase',
      ],
    ],
    // 7 code points but 11 UTF-16 code units: the length counts characters, not code units.
    ['7 code points of which 4 are emoji', `Aa1${emoji.repeat(4)}`, ['passwordMinLength']],
    ['129 code points of which 125 are emoji', `Aa1!${emoji.repeat(125)}`, ['passwordMaxLength']],
  ])('should reject %s, naming the broken rules', async (_label, password, rules) => {
    await expect(brokenRules(password)).resolves.toEqual([...rules].sort());
  });

  it('should report each broken rule with its own message', async () => {
    const holder = new PasswordHolder();
    holder.password = 'abc';

    const [error] = await validate(holder);

    expect(error.property).toBe('password');
    expect(error.constraints).toEqual({
      passwordMinLength: 'password must be at least 8 characters long',
      passwordUppercase: 'password must contain an uppercase letter',
      passwordDigit: 'password must contain a digit',
      passwordSpecial: 'password must contain a special character',
    });
  });

  it.each([
    ['a number', 12345678],
    ['null', null],
    ['an object', { password: 'S3cure!pass' }],
  ])('should leave %s to @IsString instead of reporting password rules', async (_label, value) => {
    await expect(brokenRules(value)).resolves.toEqual([]);
  });

  it.each(PASSWORD_RULES.map((rule) => [rule.name, rule] as const))(
    'should expose %s as a pure test that accepts the reference password',
    (_name, rule) => {
      expect(rule.test('S3cure!pass')).toBe(true);
    },
  );
});
