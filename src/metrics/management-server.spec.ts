import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import type { AppConfig } from '../config/app-config.js';
import { KeygateMetrics } from './keygate-metrics.js';
import { ManagementServer } from './management-server.js';

function configWith(enabled: boolean, port = 0): AppConfig {
  return { management: { enabled, port, host: '127.0.0.1' } } as AppConfig;
}

function serverWith(config: AppConfig): ManagementServer {
  return new ManagementServer(config, new KeygateMetrics(config));
}

describe(ManagementServer.name, () => {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('should serve the registry at /metrics on the bound port, and HEAD too', async () => {
    const sut = serverWith(configWith(true));
    await sut.start();
    try {
      const base = `http://127.0.0.1:${sut.address?.port}`;

      const get = await fetch(`${base}/metrics?debug=1`);
      const head = await fetch(`${base}/metrics`, { method: 'HEAD' });

      expect(get.status).toBe(200);
      expect(await get.text()).toContain('# TYPE keygate_registrations_total counter');
      expect(head.status).toBe(200);
    } finally {
      await sut.onApplicationShutdown();
    }
  });

  it('should reject the start when the port is taken', async () => {
    const squatter = createServer().listen(0, '127.0.0.1');
    await once(squatter, 'listening');
    const { port } = squatter.address() as AddressInfo;
    const sut = serverWith(configWith(true, port));
    try {
      await expect(sut.start()).rejects.toThrow(
        new RegExp(`^Management__Port: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`),
      );
      expect(sut.address).toBeNull();
    } finally {
      squatter.close();
    }
  });

  it('should not listen when turned off', async () => {
    const sut = serverWith(configWith(false));

    await sut.start();

    expect(sut.address).toBeNull();
    await expect(sut.onApplicationShutdown()).resolves.toBeUndefined();
  });

  it('should close while a scraper keeps its connection alive', async () => {
    const sut = serverWith(configWith(true));
    await sut.start();
    const response = await fetch(`http://127.0.0.1:${sut.address?.port}/metrics`, {
      headers: { connection: 'keep-alive' },
    });
    await response.text();

    await sut.onApplicationShutdown();

    expect(sut.address).toBeNull();
  });
});
