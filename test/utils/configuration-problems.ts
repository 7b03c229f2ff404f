import { ConfigurationError, loadAppConfig } from '../../src/config/app-config.js';

/**
 * The message of the ConfigurationError `raw` fails with at boot: every problem found, one a
 * line. Fails the test when the configuration loads or fails with anything else.
 */
export function configurationProblemsOf(raw: Record<string, string>): string {
  try {
    loadAppConfig(raw);
  } catch (error: unknown) {
    if (error instanceof ConfigurationError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('expected a ConfigurationError, but the configuration loaded');
}
