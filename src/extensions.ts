import type { KeygateExtension } from './database/keygate-extension.js';

/**
 * The extensions this deployment mounts: the one place a team adds its own module (see
 * docs/development.md, Extending). The service (main.ts), the admin CLI, the TypeORM CLI and
 * `npm run openapi` all read it, so every one of them knows the same migrations and routes.
 */
export const EXTENSIONS: readonly KeygateExtension[] = [];
