import { FakeClock } from '../../test/utils/fake-clock.js';
import { originAt } from '../../test/utils/origin.js';
import type { AppConfig } from '../config/app-config.js';
import type { AuthEvent } from '../events/auth-event.js';
import type { DataSource } from 'typeorm';
import { buildAuthEvents } from '../../test/utils/auth-events.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import type { AuthEvents } from '../events/auth-events.js';
import { AuthEventMetrics } from './auth-event-metrics.js';
import { KeygateMetrics } from './keygate-metrics.js';

const USER = '6f1c9a52-0a4e-4a43-9d5e-2b8f3f0b7d11';
const FAMILY = '0d3b0e8e-7a0c-4a55-8f3e-9f8f1d7c2a10';
const OTHERS = ['b1', 'b2', 'b3'];

function configWith(enabled: boolean): AppConfig {
  return { management: { enabled, port: 0, host: '127.0.0.1' } } as AppConfig;
}

/** Every counter sample, keyed `name{labels}`, that is not zero. */
async function nonZeroCounters(metrics: KeygateMetrics): Promise<Record<string, number>> {
  const counted: Record<string, number> = {};
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    if (String(metric.type) !== 'counter' || !metric.name.startsWith('keygate_')) {
      continue;
    }
    for (const { labels, value } of metric.values) {
      const labelText = Object.entries(labels)
        .map(([label, text]) => `${label}=${String(text)}`)
        .join(',');
      if (value !== 0) {
        counted[labelText === '' ? metric.name : `${metric.name}{${labelText}}`] = value;
      }
    }
  }
  return counted;
}

describe(AuthEventMetrics.name, () => {
  let metrics: KeygateMetrics;
  let events: AuthEvents;

  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const build = (enabled: boolean): AuthEventMetrics => {
    metrics = new KeygateMetrics(configWith(enabled));
    events = buildAuthEvents(dataSource, new FakeClock());
    const sut = new AuthEventMetrics(events, metrics);
    sut.onModuleInit();
    return sut;
  };

  it.each<[string, AuthEvent, Record<string, number>]>([
    [
      'a registration',
      { type: 'registered', userId: USER, familyId: FAMILY },
      { keygate_registrations_total: 1 },
    ],
    [
      'a successful login',
      { type: 'login_succeeded', userId: USER, familyId: FAMILY },
      { 'keygate_logins_total{outcome=success}': 1 },
    ],
    [
      'a login with an unknown e-mail',
      { type: 'login_failed', userId: null, email: 'x@example.com', reason: 'unknown_email' },
      { 'keygate_logins_total{outcome=bad_credentials}': 1 },
    ],
    [
      'a login with a wrong password',
      { type: 'login_failed', userId: USER, email: 'x@example.com', reason: 'bad_password' },
      { 'keygate_logins_total{outcome=bad_credentials}': 1 },
    ],
    [
      'a login while locked out',
      { type: 'login_failed', userId: USER, email: 'x@example.com', reason: 'locked' },
      { 'keygate_logins_total{outcome=locked}': 1 },
    ],
    [
      'a login to a deactivated account',
      { type: 'login_failed', userId: USER, email: 'x@example.com', reason: 'deactivated' },
      { 'keygate_logins_total{outcome=deactivated}': 1 },
    ],
    [
      'a lockout',
      {
        type: 'lockout_started',
        userId: USER,
        failedAttempts: 5,
        lockedUntil: new Date('2026-01-01T00:15:00.000Z'),
      },
      { keygate_lockouts_total: 1 },
    ],
    [
      'a rotation',
      {
        type: 'token_refreshed',
        userId: USER,
        familyId: FAMILY,
        generation: 4,
      },
      { 'keygate_refreshes_total{outcome=rotated}': 1 },
    ],
    [
      'an unknown refresh token',
      { type: 'refresh_failed', userId: null, reason: 'invalid' },
      { 'keygate_refreshes_total{outcome=invalid}': 1 },
    ],
    [
      'an expired refresh token',
      { type: 'refresh_failed', userId: USER, reason: 'expired' },
      { 'keygate_refreshes_total{outcome=expired}': 1 },
    ],
    [
      'a refresh for a deactivated account',
      { type: 'refresh_failed', userId: USER, reason: 'deactivated' },
      { 'keygate_refreshes_total{outcome=deactivated}': 1 },
    ],
    [
      'a reuse that ended the session its descendant carried on',
      {
        type: 'reuse_detected',
        userId: USER,
        familyId: FAMILY,
        generation: 1,
        sessionEnded: true,
      },
      {
        'keygate_refreshes_total{outcome=reuse_detected}': 1,
        'keygate_descendant_tokens_revoked_total{cause=reuse_detected}': 1,
      },
    ],
    [
      'a reuse with no live descendant',
      {
        type: 'reuse_detected',
        userId: USER,
        familyId: FAMILY,
        generation: 1,
        sessionEnded: false,
      },
      { 'keygate_refreshes_total{outcome=reuse_detected}': 1 },
    ],
    [
      'a revocation of an active token',
      {
        type: 'token_revoked',
        userId: USER,
        familyId: FAMILY,
        generation: 2,
        sessionEnded: true,
        wasRotated: false,
      },
      { keygate_revocations_total: 1 },
    ],
    [
      'a revocation of a rotated token whose session carried on',
      {
        type: 'token_revoked',
        userId: USER,
        familyId: FAMILY,
        generation: 0,
        sessionEnded: true,
        wasRotated: true,
      },
      {
        keygate_revocations_total: 1,
        'keygate_descendant_tokens_revoked_total{cause=revoke}': 1,
      },
    ],
    [
      'a revocation of an already revoked token',
      {
        type: 'token_revoked',
        userId: USER,
        familyId: FAMILY,
        generation: 2,
        sessionEnded: false,
        wasRotated: false,
      },
      { keygate_revocations_total: 1 },
    ],
    [
      'the end of all sessions',
      { type: 'sessions_revoked', userId: USER, keepFamilyId: null, endedSessionIds: OTHERS },
      { keygate_all_sessions_revocations_total: 1 },
    ],
    [
      'a lost answer retried within the window',
      { type: 'refresh_retried', userId: USER, familyId: FAMILY, generation: 3 },
      { 'keygate_refreshes_total{outcome=retried}': 1 },
    ],
    [
      'a mailed sign-in code',
      { type: 'email_code_requested', userId: USER },
      { keygate_email_codes_issued_total: 1 },
    ],
    [
      'a sign-in with a mailed code',
      { type: 'email_code_login_succeeded', userId: USER, familyId: FAMILY },
      { 'keygate_email_code_logins_total{outcome=success}': 1 },
    ],
    [
      'a wrong mailed code',
      { type: 'email_code_login_failed', userId: USER, reason: 'bad_code' },
      { 'keygate_email_code_logins_total{outcome=bad_code}': 1 },
    ],
    [
      'the wrong mailed code that ended it',
      { type: 'email_code_login_failed', userId: USER, reason: 'exhausted' },
      { 'keygate_email_code_logins_total{outcome=exhausted}': 1 },
    ],
    [
      'a mailed code for no account',
      { type: 'email_code_login_failed', userId: null, reason: 'invalid' },
      { 'keygate_email_code_logins_total{outcome=invalid}': 1 },
    ],
  ])('should count %s, and nothing else', async (_label, event, expected) => {
    build(true);

    await events.recordAlone(event, originAt('192.0.2.1'));

    await expect(nonZeroCounters(metrics)).resolves.toEqual(expected);
  });

  it('should start every outcome series at 0, so they exist before their first event', async () => {
    build(true);

    const exposition = await metrics.scraped.metrics();

    for (const line of [
      'keygate_logins_total{outcome="bad_credentials"} 0',
      'keygate_refreshes_total{outcome="deactivated"} 0',
      'keygate_descendant_tokens_revoked_total{cause="revoke"} 0',
      'keygate_password_hash_duration_seconds_count{operation="verify"} 0',
      'keygate_lockouts_total 0',
      'keygate_email_code_logins_total{outcome="bad_code"} 0',
      'keygate_email_codes_issued_total 0',
    ]) {
      expect(exposition).toContain(`${line}\n`);
    }
  });

  it('should keep the counters of two apps in one process apart, with one set of process metrics', async () => {
    const first = new KeygateMetrics(configWith(true));
    const second = new KeygateMetrics(configWith(true));

    first.registrations.inc();
    const [firstText, secondText] = await Promise.all([
      first.scraped.metrics(),
      second.scraped.metrics(),
    ]);

    expect(firstText).toContain('keygate_registrations_total 1\n');
    expect(secondText).toContain('keygate_registrations_total 0\n');
    for (const text of [firstText, secondText]) {
      expect(text.match(/^# TYPE process_cpu_seconds_total counter$/gm)).toHaveLength(1);
    }
  });

  it('should not listen when the management listener is off', async () => {
    build(false);

    await events.recordAlone(
      { type: 'registered', userId: USER, familyId: FAMILY },
      originAt('192.0.2.1'),
    );

    await expect(nonZeroCounters(metrics)).resolves.toEqual({});
    await expect(metrics.scraped.metrics()).resolves.not.toContain('process_cpu');
  });
});
