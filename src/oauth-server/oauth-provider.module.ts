import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { EmailCodesModule } from '../email-codes/email-codes.module.js';
import { PasskeyRoutesModule } from '../passkeys/passkey-routes.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { ConsentApproval } from './consent/consent-approval.js';
import { ConsentRequestsService } from './consent/consent-requests.service.js';
import { PendingInteractions } from './consent/pending-interactions.js';
import { OAuthArtefact } from './entities/oauth-artefact.entity.js';
import { ProviderEvents } from './events/provider-events.js';
import { OAuthConsent } from './entities/oauth-consent.entity.js';
import { OAuthConsentRepository } from './grants/oauth-consent.repository.js';
import { OAuthGrantsController } from './grants/oauth-grants.controller.js';
import { OAuthGrantsService } from './grants/oauth-grants.service.js';
import { OAuthClientsModule } from './oauth-clients.module.js';
import { DevicePages } from './pages/device-pages.js';
import { InteractionPagesService } from './pages/interaction-pages.service.js';
import { PageTemplates } from './pages/page-templates.js';
import { BrowserSessions } from './provider/browser-sessions.js';
import { ProviderAccounts } from './provider/provider-accounts.js';
import { ProviderHost } from './provider/provider-host.js';
import { ProviderMount } from './provider/provider-mount.js';
import { loadProtocolLibrary, PROTOCOL_LIBRARY } from './provider/protocol-library.js';
import { ArtefactCleanup } from './storage/artefact-cleanup.js';

/**
 * Keygate as an OpenID provider: the protocol library (panva's oidc-provider), its storage over
 * `oauth_artefacts`, the registered clients and Keygate's accounts and keys, mounted on the HTTP
 * server under `/oauth/` and the discovery documents. Mounted only when OAuthServer__Enabled.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([OAuthArtefact, OAuthConsent]),
    OAuthClientsModule,
    KeysModule,
    UsersModule,
    AuthModule,
    TokensModule,
    // The hosted sign-in page's other ways in, under their own modules' rules.
    EmailCodesModule,
    PasskeysModule,
    PasskeyRoutesModule,
  ],
  providers: [
    { provide: PROTOCOL_LIBRARY, useFactory: loadProtocolLibrary },
    ProviderAccounts,
    ProviderHost,
    ProviderMount,
    PageTemplates,
    InteractionPagesService,
    DevicePages,
    ArtefactCleanup,
    BrowserSessions,
    ProviderEvents,
    OAuthConsentRepository,
    OAuthGrantsService,
    ConsentApproval,
    ConsentRequestsService,
    PendingInteractions,
  ],
  controllers: [OAuthGrantsController],
  exports: [OAuthGrantsService, ConsentRequestsService],
})
export class OAuthProviderModule {}
