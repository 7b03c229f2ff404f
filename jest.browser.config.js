// `npm run test:browser`: the Swagger UI in Debian's Chromium. A configuration of its own, so
// that plain `jest` (npm test) never needs a browser; the TypeScript set-up is the e2e project's.
import config from './jest.config.js';

const e2e = config.projects.find((project) => project.displayName === 'e2e');

/** @type {import('jest').Config} */
export default {
  reporters: config.reporters,
  // A browser start and a page that renders its operations take seconds, not milliseconds.
  testTimeout: 60_000,
  projects: [
    {
      ...e2e,
      displayName: 'browser',
      testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
    },
  ],
};
