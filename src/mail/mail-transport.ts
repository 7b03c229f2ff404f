import { Logger } from '@nestjs/common';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import type { MailTransportConfig } from '../config/settings/mail-settings.js';
import type { RenderedMail } from './mail-templates.js';

/** One mail as it leaves the service. */
export interface OutgoingMail extends RenderedMail {
  /** The outbox row's id: the file name, and the left part of the Message-ID. */
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly messageId: string;
  /** The Date header: when the mail was queued, so every attempt sends the same message. */
  readonly date: Date;
}

/** Why an attempt failed, in terms the sender decides on; never the server's text. */
export class DeliveryError extends Error {
  constructor(
    /** A short code: nodemailer's (`ECONNECTION`, `EENVELOPE`, …) and the SMTP status. */
    readonly code: string,
    /** The server refused this message for good: retrying would get the same answer. */
    readonly isPermanent: boolean,
  ) {
    super(`Mail delivery failed: ${code}`);
    this.name = 'DeliveryError';
  }
}

export interface MailTransport {
  /** Resolves once the mail is accepted; rejects with a DeliveryError. */
  send(mail: OutgoingMail, signal: AbortSignal): Promise<void>;
  close(): void;
}

/** Nodemailer's SMTP transport, one connection per mail, cut off by the caller's signal. */
export class SmtpMailTransport implements MailTransport {
  private readonly transporter: ReturnType<typeof createTransport>;

  constructor(url: string, timeoutMs: number) {
    // Every wait is bounded by the attempt's own deadline; nodemailer's defaults run to minutes.
    this.transporter = createTransport({
      url,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  }

  async send(mail: OutgoingMail, signal: AbortSignal): Promise<void> {
    try {
      await this.transporter.sendMail({ ...message(mail), signal });
    } catch (error: unknown) {
      throw deliveryError(error);
    }
  }

  close(): void {
    this.transporter.close();
  }
}

/**
 * Development without SMTP: each mail becomes `<id>.eml` in the directory, written whole (a
 * temporary file renamed into place), so a retry rewrites the same file. The log says where, and
 * never what the mail says: its link is a credential.
 */
export class FileMailTransport implements MailTransport {
  private readonly logger = new Logger(FileMailTransport.name);
  private readonly composer = createTransport({ streamTransport: true, buffer: true });

  constructor(private readonly directory: string) {}

  async send(mail: OutgoingMail): Promise<void> {
    const { message: eml } = await this.composer.sendMail(message(mail));
    if (!Buffer.isBuffer(eml)) {
      throw new Error('The mail composer did not return a buffer');
    }
    mkdirSync(this.directory, { recursive: true });
    const path = join(this.directory, `${mail.id}.eml`);
    writeFileSync(`${path}.tmp`, eml);
    renameSync(`${path}.tmp`, path);
    this.logger.log(`Mail ${mail.id} written to ${path}`);
  }

  close(): void {
    this.composer.close();
  }
}

export function createMailTransport(
  config: MailTransportConfig,
  timeoutMs: number,
): MailTransport | null {
  switch (config.kind) {
    case 'smtp':
      return new SmtpMailTransport(config.url, timeoutMs);
    case 'files':
      return new FileMailTransport(config.directory);
    case 'off':
      return null;
  }
}

function message(mail: OutgoingMail) {
  return {
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    date: mail.date,
  };
}

function deliveryError(error: unknown): DeliveryError {
  const details = (typeof error === 'object' && error !== null ? error : {}) as {
    readonly code?: unknown;
    readonly responseCode?: unknown;
    readonly permanent?: unknown;
  };
  const code = typeof details.code === 'string' ? details.code : 'EUNKNOWN';
  const status = typeof details.responseCode === 'number' ? ` ${details.responseCode}` : '';
  return new DeliveryError(`${code}${status}`.slice(0, 100), details.permanent === true);
}
