// Jest runs the TypeScript sources as native ES modules (NestJS 12 ships ESM only), so it needs
// `node --experimental-vm-modules` (see the test scripts) and ts-jest in ESM mode.
const esmTypeScript = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  setupFiles: ['<rootDir>/test/utils/setup-reflect.ts'],
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
export default {
  reporters: ['default', '<rootDir>/test/utils/summary-reporter.js'],
  // Jest's default on two cores is one worker. The suites mostly wait (password hashing in the
  // thread pool, HTTP, PostgreSQL), so two workers on a 2-core machine ran `jest` in 316 s
  // instead of 548 s, and `npm run test:pg` in 314 s instead of 485 s, all passing. A fixed two:
  // more would open more databases and processes at once than a CI machine may have cores for.
  maxWorkers: 2,
  projects: [
    {
      // Reads the repository (documentation against code); starts nothing.
      ...esmTypeScript,
      displayName: 'checks',
      rootDir: '.',
      testMatch: ['<rootDir>/test/checks/**/*.check-spec.ts'],
    },
    {
      ...esmTypeScript,
      displayName: 'unit',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
    },
    {
      ...esmTypeScript,
      displayName: 'e2e',
      rootDir: '.',
      setupFilesAfterEnv: ['<rootDir>/test/utils/process-start-timeout.ts'],
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
    },
    {
      ...esmTypeScript,
      displayName: 'stress',
      rootDir: '.',
      testMatch: ['<rootDir>/test/stress/**/*.stress-spec.ts'],
    },
    {
      // Stops the PostgreSQL server: only ever run alone, in band (see test/run-pg.mjs).
      ...esmTypeScript,
      displayName: 'outage',
      rootDir: '.',
      testMatch: ['<rootDir>/test/outage/**/*.outage-spec.ts'],
    },
    {
      // @keygate/client's rules in Node, with a fake fetch and a fake clock (packages/client).
      ...esmTypeScript,
      displayName: 'client',
      rootDir: '.',
      transform: {
        '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'packages/client/tsconfig.json' }],
      },
      testMatch: ['<rootDir>/packages/client/test/**/*.spec.ts'],
    },
    {
      // @keygate/resource's rules in Node, against key sets served on loopback (packages/resource).
      ...esmTypeScript,
      displayName: 'resource',
      rootDir: '.',
      transform: {
        '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'packages/resource/tsconfig.json' }],
      },
      testMatch: ['<rootDir>/packages/resource/test/**/*.spec.ts'],
    },
  ],
};
