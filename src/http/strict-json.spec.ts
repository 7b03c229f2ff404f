import { jsonShapeProblem, MAX_BODY_DEPTH } from './strict-json.js';

describe(jsonShapeProblem.name, () => {
  it.each([
    ['a flat object', '{"email":"a@x.test","password":"x"}'],
    ['the deepest nesting allowed', `${'['.repeat(MAX_BODY_DEPTH)}${']'.repeat(MAX_BODY_DEPTH)}`],
    ['one key in two sibling objects', '{"a":{"k":1},"b":{"k":2}}'],
    ['a key repeated as a value', '{"k":"k","j":["k","k"]}'],
    ['a well-formed escaped pair', '{"e":"\\ud83d\\ude00"}'],
    ['escaped quotes and backslashes', '{"a\\"b":"c\\\\","a\\\\b":"\\"","x":"\\\\\\""}'],
    ['brackets inside strings', '{"a":"[[[[{{{{","b":"}}]]"}'],
    ['a scalar', '"just a string"'],
  ])('should accept %s', (_case, text) => {
    expect(jsonShapeProblem(text)).toBeNull();
  });

  it.each([
    [
      'one level too deep',
      `${'['.repeat(MAX_BODY_DEPTH + 1)}${']'.repeat(MAX_BODY_DEPTH + 1)}`,
      'tooDeep',
    ],
    ['deep objects', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`, 'tooDeep'],
    ['a repeated key', '{"a":1,"a":2}', 'duplicateKey'],
    ['a repeated key spelled with an escape', '{"email":1,"\\u0065mail":2}', 'duplicateKey'],
    ['a repeated key after a nested object', '{"a":{"b":1},"a":2}', 'duplicateKey'],
    ['a lone high surrogate', '{"a":"x\\ud800"}', 'loneSurrogate'],
    ['a lone low surrogate in a key', '{"\\udc00":1}', 'loneSurrogate'],
    ['a reversed pair', '["\\ude00\\ud83d"]', 'loneSurrogate'],
  ])('should refuse %s', (_case, text, problem) => {
    expect(jsonShapeProblem(text)).toBe(problem);
  });
});
