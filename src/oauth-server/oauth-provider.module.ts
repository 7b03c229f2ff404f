import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { OAuthArtefact } from './entities/oauth-artefact.entity.js';
import { ProviderEvents } from './events/provider-events.js';
import { AdminOAuthGrantsController } from './grants/admin-oauth-grants.controller.js';
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
import { OAuthArtefactRepository } from './storage/oauth-artefact.repository.js';

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
  ],
  providers: [
    { provide: PROTOCOL_LIBRARY, useFactory: loadProtocolLibrary },
    OAuthArtefactRepository,
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
  ],
  controllers: [OAuthGrantsController, AdminOAuthGrantsController],
})
export class OAuthProviderModule {}
