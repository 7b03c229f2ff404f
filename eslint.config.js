// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // test/typed-client is compiled by its test against a client generated at test time.
    ignores: [
      'dist/**',
      'coverage/**',
      'node_modules/**',
      'bench/results/**',
      'test/typed-client/**',
      'test/typed-admin-client/**',
    ],
  },
  // The client package's build, and its types generated from openapi.json.
  { ignores: ['packages/client/dist/**', 'packages/client/src/openapi.ts'] },
  // The resource-server helper's build.
  { ignores: ['packages/resource/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      eqeqeq: 'error',
      curly: 'error',
      'no-console': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through AppConfig; only src/config may read process.env.',
        },
      ],
    },
  },
  {
    files: ['src/config/**/*.ts', 'src/database/data-source.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Randomness comes from the injected RandomSource, as time comes from Clock (STYLE.md §1).
    files: ['src/**/*.ts'],
    ignores: ['src/common/random/random-source.ts', 'src/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:crypto', 'crypto'].map((name) => ({
            name,
            importNames: [
              'randomBytes',
              'randomUUID',
              'randomInt',
              'randomFill',
              'getRandomValues',
            ],
            message: 'Take randomness from the injected RandomSource (src/common/random).',
          })),
        },
      ],
      'no-restricted-properties': [
        'error',
        ...[
          ['crypto', 'randomUUID'],
          ['crypto', 'getRandomValues'],
          ['Math', 'random'],
        ].map(([object, property]) => ({
          object,
          property,
          message: 'Take randomness from the injected RandomSource (src/common/random).',
        })),
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Jest's expect.any()/objectContaining() matchers are typed as any by @types/jest.
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
