import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxMail } from './entities/outbox-mail.entity.js';
import { MailOutbox } from './mail-outbox.js';
import { MailSender } from './mail-sender.js';
import { MailTemplates } from './mail-templates.js';
import { OutboxMailRepository } from './outbox-mail.repository.js';
import { OutboxSecrets } from './outbox-secrets.js';

/** The outbox and its sender. Other modules queue mail through MailOutbox only. */
@Module({
  imports: [TypeOrmModule.forFeature([OutboxMail])],
  providers: [MailOutbox, MailSender, MailTemplates, OutboxMailRepository, OutboxSecrets],
  exports: [MailOutbox, MailSender],
})
export class MailModule {}
