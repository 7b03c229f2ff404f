import { Inject, Injectable, Logger } from '@nestjs/common';
import type Provider from 'oidc-provider';
import type { JWK } from 'oidc-provider';
import { RandomSource } from '../../common/random/random-source.js';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/app-config.js';
import type { OAuthServerConfig } from '../../config/settings/oauth-server-settings.js';
import { KeySet, type AsymmetricSigner } from '../../keys/key-set.js';
import { OAuthClientsService } from '../oauth-clients.service.js';
import { ProviderEvents } from '../events/provider-events.js';
import { OAuthGrantsService } from '../grants/oauth-grants.service.js';
import { ArtefactAdapter } from '../storage/artefact-adapter.js';
import { ClientAdapter } from '../storage/client-adapter.js';
import { OAuthArtefactRepository } from '../storage/oauth-artefact.repository.js';
import { BrowserSessions } from './browser-sessions.js';
import { cookieKeysOf } from './cookie-keys.js';
import { ProviderAccounts } from './provider-accounts.js';
import { installAgentDiscovery } from './agent-discovery.js';
import { PROVIDER_ROUTES, providerConfiguration } from './provider-configuration.js';
import { installAuthorizedParty } from './authorized-party.js';
import { installDevicePolling } from './device-polling.js';
import { installCanonicalResources } from './resource-indicators.js';
import { DevicePages } from '../pages/device-pages.js';
import { installClientRules } from './provider-hooks.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { PageTemplates } from '../pages/page-templates.js';
import { PROTOCOL_LIBRARY, type ProtocolLibrary } from './protocol-library.js';
import { installRegistrationEdge } from '../registration/registration-edge.js';
import { RegistrationRate } from '../registration/registration-rate.js';

/** The bytes of a device code's alias id (ArtefactAdapter): as many as the library's ids. */
const ALIAS_ID_BYTES = 32;

/**
 * The protocol library's instance. The library takes its signing keys once, when it is built, so
 * the instance is built again when the key set's signing key changes (a rotation on this or on
 * another instance, seen by the key set's reading): everything it keeps between requests is in
 * the database or in cookies signed with keys that do not change, so a sign-in in flight carries
 * on in the new instance, and ID tokens of the old key still verify against the published JWKS
 * until that key leaves it (docs/operations/oauth-server.md, "Signing keys").
 */
@Injectable()
export class ProviderHost {
  private readonly logger = new Logger(ProviderHost.name);
  private readonly settings: OAuthServerConfig;
  private built: { readonly kid: string; readonly provider: Provider } | undefined;
  /** Counted across rebuilds of the instance: a key rotation resets no one's count. */
  private readonly registrationRate: RegistrationRate;

  constructor(
    @Inject(PROTOCOL_LIBRARY) private readonly library: ProtocolLibrary,
    private readonly config: AppConfig,
    private readonly keySet: KeySet,
    private readonly clients: OAuthClientsService,
    private readonly artefacts: OAuthArtefactRepository,
    private readonly accounts: ProviderAccounts,
    private readonly clock: Clock,
    private readonly templates: PageTemplates,
    private readonly browserSessions: BrowserSessions,
    private readonly grants: OAuthGrantsService,
    private readonly providerEvents: ProviderEvents,
    private readonly devicePages: DevicePages,
    private readonly random: RandomSource,
  ) {
    if (config.oauthServer === null) {
      throw new Error('The OpenID provider is mounted only when OAuthServer__Enabled=true');
    }
    this.settings = config.oauthServer;
    this.registrationRate = new RegistrationRate(clock);
  }

  /** The instance for the current signing key; throws while the key set has none. */
  current(): Provider {
    const signer = this.keySet.signer();
    if (signer === null) {
      throw new Error('The OpenID provider has no signing key yet');
    }
    if (this.built?.kid !== signer.kid) {
      this.built = { kid: signer.kid, provider: this.build(signer) };
      this.logger.log(`OpenID provider ready, signing with key ${signer.kid}`);
    }
    return this.built.provider;
  }

  /**
   * The library's policy, with one more reason to sign in again: the Keygate session behind the
   * browser session has ended (BrowserSessions). The hosted sign-in hands its session id over in
   * the login result; the check links it when the library resumes with that result.
   */
  private policy() {
    const { Check, base } = this.library.interactionPolicy;
    const policy = base();
    const lifetimeSeconds = this.settings.refreshTokenDays * 24 * 60 * 60;
    policy.get('login')?.checks.add(
      new Check(
        'keygate_session_ended',
        'the Keygate session behind this browser session has ended',
        'login_required',
        async (ctx) => {
          const { session } = ctx.oidc;
          if (session?.accountId === undefined) {
            return Check.NO_NEED_TO_PROMPT;
          }
          const login = (ctx.oidc.result as { login?: { keygateSessionId?: unknown } } | undefined)
            ?.login;
          if (typeof login?.keygateSessionId === 'string') {
            await this.browserSessions.link(session.uid, login.keygateSessionId, lifetimeSeconds);
            return Check.NO_NEED_TO_PROMPT;
          }
          return (await this.browserSessions.isLive(session.uid, session.accountId))
            ? Check.NO_NEED_TO_PROMPT
            : Check.REQUEST_PROMPT;
        },
      ),
    );
    return policy;
  }

  private build(signer: AsymmetricSigner): Provider {
    const signingKey = {
      ...(signer.privateKey.export({ format: 'jwk' }) as JWK),
      kid: signer.kid,
      alg: signer.algorithm,
      use: 'sig',
    };
    const clientAdapter = new ClientAdapter(this.clients, () => signer.algorithm, this.settings);
    const provider = new this.library.default(
      this.settings.issuer,
      providerConfiguration({
        settings: this.settings,
        signingKey,
        cookieKeys: cookieKeysOf(this.config.jwt.secret, this.config.jwt.previousSecrets),
        clockToleranceSeconds: this.config.jwt.clockSkewSeconds,
        adapter: (name: string) =>
          name === 'Client'
            ? clientAdapter
            : new ArtefactAdapter(
                name,
                this.artefacts,
                this.clock,
                this.library.errors.InvalidGrant,
                (kind) => this.providerEvents.lostRace(kind),
                () => this.library.default.ctx?.oidc?.route,
                () => this.random.bytes(ALIAS_ID_BYTES).toString('base64url'),
              ),
        findAccount: (_ctx, sub) => this.accounts.find(sub),
        errorPage: (code) =>
          this.templates.render('error', { message: OAuthServerMessages.refusedRequest, code }),
        logoutPage: (form) => this.templates.render('logout', form),
        loggedOutPage: () => this.templates.render('logged-out', {}),
        policy: this.policy(),
        invalidTarget: (description) => new this.library.errors.InvalidTarget(description),
        rememberedGrantId: (accountId, clientId) => this.grants.grantIdOf(accountId, clientId),
        registration: {
          newClientId: () => this.random.uuid(),
          newClientSecret: () => this.clients.newClientSecret(),
          // The library's error names itself invalid_redirect_uri when its description starts
          // with `redirect_uris` (as the rules' refusals of redirect URIs do).
          refusal: ({ description }) => new this.library.errors.InvalidClientMetadata(description),
        },
        isSelfRegistered: async (client) =>
          (client as { clientIdMetadataDocument?: unknown }).clientIdMetadataDocument === true ||
          (await this.clients.find(client.clientId))?.isSelfRegistered === true,
        deviceFlow: this.devicePages.feature(),
      }),
    );
    // Behind a trusted proxy the scheme and host of a request are the ones it forwards.
    provider.proxy = this.config.trustedProxies.length > 0;
    installClientRules(provider);
    if (this.settings.dynamicRegistration !== 'off') {
      installRegistrationEdge(provider, PROVIDER_ROUTES.registration, this.registrationRate);
    }
    this.providerEvents.install(provider);
    installAgentDiscovery(provider, this.settings.resources);
    installCanonicalResources(provider, this.settings.resources);
    installAuthorizedParty(provider);
    if (this.settings.deviceFlow) {
      provider.use(this.devicePages.middleware());
      installDevicePolling(provider, this.clock);
    }
    return provider;
  }
}
