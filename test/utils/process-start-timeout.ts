import { jest } from '@jest/globals';

// Some e2e tests start the built service as a process, twice over at times: on two busy cores
// that alone can take longer than Jest's default 5 s.
jest.setTimeout(30_000);
