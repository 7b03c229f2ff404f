import type { MigrationInterface, QueryRunner } from 'typeorm';
import { emailCollisions, type StoredEmail } from '../../common/identity/email-collisions.js';
import { normalizeEmail } from '../../common/identity/email.js';

/** Rows read per statement, so a large table is never read in one answer. */
const BATCH_SIZE = 5_000;
/** User ids the failure names, so its message stays one readable line. */
const IDS_SHOWN = 10;

/**
 * Brings every stored e-mail address to its canonical form (normalizeEmail: NFKC and full case
 * folding of the local part, UTS #46 ASCII form of the domain), which is how logins look them
 * up from now on. If two accounts would end up with one address, nothing is changed and the
 * migration fails with a message that names the accounts by id only (never an address: it ends
 * up in logs); `npm run cli -- users:email-collisions` lists them for an operator to resolve.
 *
 * It uses the service's own normalisation on purpose: the stored form must be the one the
 * running code computes. A later change to normalizeEmail needs a migration of its own.
 */
export class CanonicalEmails1795392000000 implements MigrationInterface {
  name = 'CanonicalEmails1795392000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const accounts = await readEmails(queryRunner);
    const collisions = emailCollisions(accounts);
    if (collisions.length > 0) {
      throw new Error(collisionMessage(collisions));
    }
    for (const { id, email } of accounts) {
      const canonical = normalizeEmail(email);
      if (canonical !== email) {
        await queryRunner.manager
          .createQueryBuilder()
          .update('users')
          .set({ email: canonical })
          .where('"id" = :id', { id })
          .execute();
      }
    }
  }

  /** The former forms are not kept; canonical addresses are valid ones for the older code. */
  async down(): Promise<void> {}
}

async function readEmails(queryRunner: QueryRunner): Promise<StoredEmail[]> {
  const accounts: StoredEmail[] = [];
  let after = '';
  for (;;) {
    const batch = await queryRunner.manager
      .createQueryBuilder()
      .select(['"id" AS "id"', '"email" AS "email"'])
      .from('users', 'users')
      .where('"id" > :after', { after })
      .orderBy('"id"')
      .limit(BATCH_SIZE)
      .getRawMany<StoredEmail>();
    accounts.push(...batch);
    if (batch.length < BATCH_SIZE) {
      return accounts;
    }
    after = batch[batch.length - 1].id;
  }
}

export function collisionMessage(
  collisions: readonly { accounts: readonly StoredEmail[] }[],
): string {
  const ids = collisions.flatMap((collision) => collision.accounts.map((account) => account.id));
  const shown = ids.slice(0, IDS_SHOWN).join(', ') + (ids.length > IDS_SHOWN ? ', …' : '');
  return (
    `${ids.length} accounts have e-mail addresses that are one address in canonical form ` +
    `(${collisions.length} group(s); user ids ${shown}). Nothing was changed. List them with ` +
    '`npm run cli -- users:email-collisions`, give each account of a group a distinct address ' +
    'or remove the extra accounts, then start again.'
  );
}
