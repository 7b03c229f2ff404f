import { readFileSync } from 'node:fs';
import { AUTH_EVENT_TYPES } from '../../src/events/auth-event.js';

/** The first column of the catalogue table in docs/webhooks.md. */
function documentedTypes(): string[] {
  const page = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const catalogue = page.slice(page.indexOf('## The catalogue'), page.indexOf('## Verifying'));
  return [...catalogue.matchAll(/^\| `([a-z_]+)`/gm)].map((match) => match[1]);
}

describe('the webhook catalogue in docs/webhooks.md', () => {
  it('should document every event type the service records, once, and no other', () => {
    expect([...documentedTypes()].sort()).toEqual([...AUTH_EVENT_TYPES].sort());
    expect(new Set(documentedTypes()).size).toBe(documentedTypes().length);
  });
});
