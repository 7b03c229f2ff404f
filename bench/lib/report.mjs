// Turning one run's results into bench/results/latest{,-pg}.{md,json} and ratios{,-pg}.svg.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { round } from './stats.mjs';

/** Writes the three result files; returns their paths. */
export async function writeResults(results, dir) {
  await mkdir(dir, { recursive: true });
  // A --quick smoke run never overwrites the figures of a real run.
  const suffix = `${results.mode === 'pg' ? '-pg' : ''}${results.quick ? '-quick' : ''}`;
  const files = {
    md: join(dir, `latest${suffix}.md`),
    json: join(dir, `latest${suffix}.json`),
    svg: join(dir, `ratios${suffix}.svg`),
  };
  await writeFile(files.md, toMarkdown(results));
  await writeFile(files.json, `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(files.svg, toSvg(results));
  return files;
}

const fmt = (value, digits = 1) => {
  const rounded = round(value, digits);
  return rounded === null
    ? 'n/a'
    : rounded.toLocaleString('en-US', { maximumFractionDigits: digits });
};
const row = (cells) => `| ${cells.join(' | ')} |`;
const ENDPOINT_PATHS = {
  me: 'GET /me',
  refresh: 'POST /refresh',
  login: 'POST /login',
  register: 'POST /register',
};

function toMarkdown(r) {
  const { machine, plan } = r;
  const pg = r.mode === 'pg';
  const title = pg ? 'PostgreSQL (two service instances)' : 'SQLite';
  return [
    `# Keygate benchmark: service on ${title}`,
    '',
    `Command: \`${r.command}\` · ${machine.date}`,
    '',
    `Machine: nproc ${machine.nproc} · ${machine.cpuModel} · Node ${machine.node} · ` +
      `Linux ${machine.kernel}${pg ? ` · ${machine.postgres}` : ''}`,
    '',
    `Other processes on the machine used a median of ${fmt(r.otherActivity.medianCores, 2)} and at ` +
      `most ${fmt(r.otherActivity.maxCores, 2)} of the ${machine.nproc} cores during the measured ` +
      `windows (${r.otherActivity.duringCeilingsCores.map((c) => fmt(c, 2)).join(', ')} during the ` +
      'PBKDF2 ceilings). Busy ' +
      'windows lower and blur absolute figures; the ratios are measured side by side and suffer less.',
    '',
    '## Targets',
    '',
    'The last column is the most CPU that other processes on the machine took during the windows ' +
      'behind each figure (start-up: the median); above a few tenths of a core, rerun before ' +
      'trusting a verdict.',
    '',
    row(['Target', 'Threshold', 'Measured', 'Result', 'Other processes (cores)']),
    row(['---', '---', '---', '---', '---']),
    ...r.targets.map((t) => row([t.name, t.threshold, t.measured, t.result, fmt(t.otherCores, 2)])),
    '',
    ...roundTripLines(r.roundTrips),
    `## Per endpoint: median of ${plan.rounds} rounds`,
    '',
    `${plan.connections} connections, pipelining 1. Each run skips ${plan.warmupMs / 1000} s of ` +
      `ramp-up, then measures ${plan.fastWindowMs / 1000} s (/me, refresh) or ` +
      `${plan.hashWindowMs / 1000} s (login, register). Service and baseline alternate, ` +
      'the first of the pair swapping each round.' +
      (pg ? ' Service figures add both instances (CPU summed, peak RSS of the larger).' : ''),
    '',
    endpointTable(r),
    '',
    'Service/baseline throughput ratio of each round: ' +
      Object.entries(r.endpoints)
        .map(([name, e]) => `${ENDPOINT_PATHS[name]} ${e.ratios.map((x) => fmt(x, 2)).join(', ')}`)
        .join('; ') +
      '.',
    '',
    '## PBKDF2 ceiling',
    '',
    `${r.pbkdf2.parallelism} concurrent async \`crypto.pbkdf2\` calls (SHA-256, ` +
      `${plan.pbkdf2Iterations.toLocaleString('en-US')} iterations) in the harness, servers idle, ` +
      `${plan.ceilingMs / 1000} s at the start of every round: ` +
      `${r.pbkdf2.rounds.map((c) => fmt(c.hashesPerSecond, 2)).join(', ')} hashes/s. The best, ` +
      `**${fmt(r.pbkdf2.hashesPerSecond, 2)} hashes/s**, is the ceiling: the most logins or ` +
      'registrations per second this machine can do (a busy moment only lowers a measurement). ' +
      `One hash costs ${fmt(r.pbkdf2.cpuMsPerHash, 1)} ms of CPU; the CPU columns divide that by ` +
      "the CPU time a request costs, which asks the same question without depending on other processes' load.",
    '',
    row([
      'Endpoint',
      'Service req/s',
      'Service share of ceiling',
      'Baseline req/s',
      'Baseline share',
      'Service CPU share',
      'Baseline CPU share',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---']),
    ...['login', 'register'].map((name) => {
      const e = r.endpoints[name];
      const share = r.pbkdf2.shares[name];
      return row([
        ENDPOINT_PATHS[name],
        fmt(e.service.rps, 2),
        fmt(share.service, 2),
        fmt(e.baseline.rps, 2),
        fmt(share.baseline, 2),
        fmt(share.serviceCpu, 2),
        fmt(share.baselineCpu, 2),
      ]);
    }),
    '',
    '## /me during a login flood',
    '',
    `GET /me at ${plan.meRate} requests/s (autocannon overallRate, ${plan.floodMeConnections} ` +
      `connections) while ${plan.floodConnections} connections send logins, ` +
      `${plan.floodWindowMs / 1000} s measured after 1 s of ramp-up.`,
    '',
    row(['Server', '/me p50 ms', '/me p99 ms', '/me max ms', '/me req/s', 'logins/s meanwhile']),
    row(['---', '---', '---', '---', '---', '---']),
    ...['service', 'baseline'].map((label) => {
      const f = r.flood[label];
      return row([
        label,
        fmt(f.me.p50),
        fmt(f.me.p99),
        fmt(f.me.max),
        fmt(f.me.rps),
        fmt(f.login.rps, 2),
      ]);
    }),
    '',
    '## The session check (Jwt__RequireActiveSession=true)',
    '',
    sessionCheckText(r),
    '',
    '## Memory and file descriptors under a mixed load (service)',
    '',
    stabilityText(r.stability),
    '',
    '## Start-up',
    '',
    `Spawn of \`node dist/main.js\` to the first answer (401) of GET /api/auth/me, on a fresh ` +
      `${pg ? 'PostgreSQL database' : 'SQLite file'} each time (migrations included): ` +
      `${r.startup.samplesMs.map((ms) => fmt(ms, 0)).join(', ')} ms; ` +
      `**median ${fmt(r.startup.medianMs, 0)} ms**. Other processes used a median of ` +
      `${fmt(r.startup.otherCoresMedian, 2)} cores meanwhile.`,
    '',
    '## How it was measured',
    '',
    ...r.notes.map((note) => `- ${note}`),
    '',
  ].join('\n');
}

function endpointTable(r) {
  const pg = r.mode === 'pg';
  const header = [
    'Endpoint',
    'Service req/s',
    'Baseline req/s',
    'Service/baseline',
    'Service p50 / p99 ms',
    'Baseline p50 / p99 ms',
    'Service CPU ms/req',
    'Baseline CPU ms/req',
    ...(pg ? ['PostgreSQL CPU ms/req'] : []),
    'Service peak RSS MiB',
    'Baseline peak RSS MiB',
    'non-2xx service / baseline',
  ];
  const lines = [row(header), row(header.map(() => '---'))];
  for (const [name, e] of Object.entries(r.endpoints)) {
    const { service: s, baseline: b } = e;
    lines.push(
      row([
        ENDPOINT_PATHS[name],
        fmt(s.rps),
        fmt(b.rps),
        `${fmt(e.ratio, 2)}×`,
        `${fmt(s.p50)} / ${fmt(s.p99)}`,
        `${fmt(b.p50)} / ${fmt(b.p99)}`,
        fmt(s.cpuMsPerRequest, 3),
        fmt(b.cpuMsPerRequest, 3),
        ...(pg ? [fmt(s.dbCpuMsPerRequest, 3)] : []),
        fmt(s.peakRssMiB, 0),
        fmt(b.peakRssMiB, 0),
        `${s.non2xx} / ${b.non2xx}`,
      ]),
    );
  }
  return lines.join('\n');
}

function sessionCheckText(r) {
  const c = r.sessionCheck;
  const pg = r.mode === 'pg';
  const line = (label, s) =>
    row([
      label,
      fmt(s.rps),
      `${fmt(s.p50)} / ${fmt(s.p99)}`,
      fmt(s.cpuMsPerRequest, 3),
      ...(pg ? [fmt(s.dbCpuMsPerRequest, 3)] : []),
      `${s.non2xx}`,
    ]);
  return [
    'GET /me on the service as configured by default and on a copy started with ' +
      '`Jwt__RequireActiveSession=true`, which reads the session of the token on every request ' +
      `(median of ${r.plan.rounds} rounds, the two measured back to back in each).`,
    '',
    row([
      'GET /me',
      'req/s',
      'p50 / p99 ms',
      'CPU ms/req',
      ...(pg ? ['PostgreSQL CPU ms/req'] : []),
      'non-2xx',
    ]),
    row(['---', '---', '---', '---', ...(pg ? ['---'] : []), '---']),
    line('default', c.off),
    line('session check', c.on),
    '',
    `**The check costs ${fmt(c.extraCpuMsPerRequest * 1000, 0)} µs of service CPU per request** ` +
      `(per round: ${c.extraCpuMsPerRequestByRound.map((ms) => fmt(ms * 1000, 0)).join(', ')} µs)` +
      (pg ? ` and ${fmt(c.extraDbCpuMsPerRequest * 1000, 0)} µs of PostgreSQL CPU` : '') +
      `; throughput with the check is ${fmt(c.throughputRatio, 2)}× the default's. Other processes ` +
      `took at most ${fmt(c.otherCores, 2)} cores meanwhile.`,
  ].join('\n');
}

function stabilityText(s) {
  const done =
    `${s.requests.toLocaleString('en-US')} requests` +
    (s.hitTimeCap
      ? ` (stopped by the ${s.maxSeconds} s time cap before ${s.planned.toLocaleString('en-US')})`
      : '');
  return [
    `${done} in ${fmt(s.seconds)} s (${fmt(s.rps)} req/s, ${s.non2xx.toLocaleString('en-US')} non-2xx as ` +
      `designed, ${s.errors} errors), cycling 15 GET /me : 4 POST /refresh : 1 login with a wrong password ` +
      '(the account locks after 5, so most of these are the cheap lockout answer).',
    '',
    `RSS every second (MiB${s.processes.length > 1 ? ', per instance' : ''}): ${traceText(s.rssTrace)}.`,
    '',
    row([
      'Process',
      'RSS before MiB',
      'RSS after MiB',
      'Growth MiB',
      'of which anonymous / file MiB',
      'Peak RSS MiB',
      'fds before',
      'fds after',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
    ...s.processes.map((p) =>
      row([
        p.name,
        fmt(p.rssBefore),
        fmt(p.rssAfter),
        fmt(p.rssAfter - p.rssBefore),
        p.anonGrowth === undefined ? '' : `${fmt(p.anonGrowth)} / ${fmt(p.fileGrowth)}`,
        fmt(p.peak),
        p.fdsBefore,
        p.fdsAfter,
      ]),
    ),
  ].join('\n');
}

/** About eight evenly spaced samples of the RSS trace, as "t s: rss". */
function traceText(trace) {
  const step = Math.max(1, Math.ceil(trace.length / 8));
  const picked = trace.filter((_, i) => i % step === 0 || i === trace.length - 1);
  return picked
    .map((p) => `${fmt(p.seconds, 0)} s: ${p.rss.map((v) => fmt(v, 0)).join(' / ')}`)
    .join(' · ');
}

/** A bar per ratio with its target marked; green when it meets the target, red when not. */
function toSvg(r) {
  const bars = r.chart;
  const width = 640;
  const height = 330;
  const left = 60;
  const top = 40;
  const plotHeight = 200;
  const slot = (width - left - 20) / bars.length;
  const max = Math.max(1.2, ...bars.map((b) => b.value ?? 0)) * 1.05;
  const y = (value) => top + plotHeight - (value / max) * plotHeight;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">Keygate ` +
      `(${r.mode === 'pg' ? 'PostgreSQL' : 'SQLite'}): ratios against their targets</text>`,
  ];
  for (let tick = 0; tick <= max; tick += 0.25) {
    parts.push(
      `<line x1="${left}" x2="${width - 20}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 8}" y="${y(tick) + 4}" text-anchor="end">${tick.toFixed(2)}</text>`,
    );
  }
  bars.forEach((bar, i) => {
    const x = left + i * slot + slot * 0.2;
    const w = slot * 0.6;
    const value = bar.value ?? 0;
    const colour = value >= bar.target ? '#2e7d32' : '#c62828';
    parts.push(
      `<rect x="${x}" y="${y(value)}" width="${w}" height="${y(0) - y(value)}" fill="${colour}"/>`,
      `<line x1="${x - 6}" x2="${x + w + 6}" y1="${y(bar.target)}" y2="${y(bar.target)}" ` +
        'stroke="black" stroke-width="2" stroke-dasharray="5,3"/>',
      `<text x="${x + w / 2}" y="${y(value) - 6}" text-anchor="middle">${fmt(value, 2)}</text>`,
      `<text x="${x + w / 2}" y="${top + plotHeight + 18}" text-anchor="middle">${bar.label}</text>`,
      `<text x="${x + w / 2}" y="${top + plotHeight + 34}" text-anchor="middle" fill="#555">` +
        `${bar.of}</text>`,
      `<text x="${x + w / 2}" y="${top + plotHeight + 50}" text-anchor="middle" fill="#555">` +
        `target ${bar.target}</text>`,
    );
  });
  parts.push(
    `<text x="${left}" y="${height - 16}" fill="#555">Dashed line: target. ` +
      'Green: met. Red: missed.</text>',
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}

/** The round trips to PostgreSQL per request (--pg), service beside baseline. */
function roundTripLines(roundTrips) {
  if (roundTrips === null || roundTrips === undefined) {
    return [];
  }
  const names = Object.keys(roundTrips.service);
  return [
    '## Round trips to PostgreSQL per request',
    '',
    'One instance each, connected through a relay that counts Sync and Query messages; requests ' +
      "one at a time. The service's figure includes its audit row, written after the answer.",
    '',
    row(['', ...names]),
    row(['---', ...names.map(() => '---')]),
    row(['service', ...names.map((name) => fmt(roundTrips.service[name], 2))]),
    row(['baseline', ...names.map((name) => fmt(roundTrips.baseline[name], 2))]),
    '',
  ];
}
