import { Injectable } from '@nestjs/common';

/** The only source of "now". Tests replace it to move time without sleeping. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
