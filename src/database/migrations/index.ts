import type { MigrationInterface } from 'typeorm';
import { CreateUsers1735689600000 } from './1735689600000-CreateUsers.js';
import { CreateRefreshTokens1735689600001 } from './1735689600001-CreateRefreshTokens.js';
import { IndexRefreshTokenExpiry1735689600002 } from './1735689600002-IndexRefreshTokenExpiry.js';
import { CreateAuthEvents1735689600100 } from './1735689600100-CreateAuthEvents.js';
import { AddRefreshTokenSessionColumns1795305600000 } from './1795305600000-AddRefreshTokenSessionColumns.js';
import { CanonicalEmails1795392000000 } from './1795392000000-CanonicalEmails.js';
import { AddUserEmailVerifiedAt1796000000000 } from './1796000000000-AddUserEmailVerifiedAt.js';
import { CreateAccountTokens1796000000001 } from './1796000000001-CreateAccountTokens.js';
import { CreateMailOutbox1796000000002 } from './1796000000002-CreateMailOutbox.js';
import { CreateTotpFactors1796180000000 } from './1796180000000-CreateTotpFactors.js';
import { AuditRetentionWindow1796500000000 } from './1796500000000-AuditRetentionWindow.js';
import { LeanTokenRows1797000000000 } from './1797000000000-LeanTokenRows.js';
import { LeanAuditEvents1797000000100 } from './1797000000100-LeanAuditEvents.js';
import { SingleColumnOwnerIndexes1797000000200 } from './1797000000200-SingleColumnOwnerIndexes.js';
import { CreateSigningKeys1798100000000 } from './1798100000000-CreateSigningKeys.js';
import { CreatePasskeys1798300000000 } from './1798300000000-CreatePasskeys.js';
import { CreateEmailCodes1798400000000 } from './1798400000000-CreateEmailCodes.js';
import { CreateAdminKeys1798500000000 } from './1798500000000-CreateAdminKeys.js';
import { CreateWebhooks1798600000000 } from './1798600000000-CreateWebhooks.js';
import { DropWebhookDueIndex1798700000000 } from './1798700000000-DropWebhookDueIndex.js';
import { WebhookQueue1798800000000 } from './1798800000000-WebhookQueue.js';
import { CreateOAuthClients1798900000000 } from './1798900000000-CreateOAuthClients.js';
import { CreateFederation1798950000000 } from './1798950000000-CreateFederation.js';
import { NotifyAccountChanges1799000000000 } from './1799000000000-NotifyAccountChanges.js';
import { CreateOAuthArtefacts1799100000000 } from './1799100000000-CreateOAuthArtefacts.js';
import { AddOAuthClientGrantTypes1799100000400 } from './1799100000400-AddOAuthClientGrantTypes.js';
import { CreateOAuthConsents1799100000100 } from './1799100000100-CreateOAuthConsents.js';
import { AddOAuthClientSelfRegistered1799150000000 } from './1799150000000-AddOAuthClientSelfRegistered.js';
import { WidenOAuthConsentClientId1799160000000 } from './1799160000000-WidenOAuthConsentClientId.js';

/** A migration as TypeORM takes it: a class named `<PascalName><epoch-ms>`. */
export type MigrationClass = new () => MigrationInterface;

/**
 * The core's migrations, in order. Listed explicitly so the build needs no glob at run time.
 * Extensions bring their own (see KeygateExtension); they run after these.
 */
export const MIGRATIONS: readonly MigrationClass[] = [
  CreateUsers1735689600000,
  CreateRefreshTokens1735689600001,
  IndexRefreshTokenExpiry1735689600002,
  CreateAuthEvents1735689600100,
  AddRefreshTokenSessionColumns1795305600000,
  CanonicalEmails1795392000000,
  AddUserEmailVerifiedAt1796000000000,
  CreateAccountTokens1796000000001,
  CreateMailOutbox1796000000002,
  CreateTotpFactors1796180000000,
  AuditRetentionWindow1796500000000,
  LeanTokenRows1797000000000,
  LeanAuditEvents1797000000100,
  SingleColumnOwnerIndexes1797000000200,
  CreateSigningKeys1798100000000,
  CreatePasskeys1798300000000,
  CreateEmailCodes1798400000000,
  CreateAdminKeys1798500000000,
  CreateWebhooks1798600000000,
  DropWebhookDueIndex1798700000000,
  WebhookQueue1798800000000,
  CreateOAuthClients1798900000000,
  CreateFederation1798950000000,
  NotifyAccountChanges1799000000000,
  CreateOAuthArtefacts1799100000000,
  CreateOAuthConsents1799100000100,
  AddOAuthClientGrantTypes1799100000400,
  AddOAuthClientSelfRegistered1799150000000,
  WidenOAuthConsentClientId1799160000000,
];
