import { Global, Module } from '@nestjs/common';
import { RandomSource } from './random-source.js';

@Global()
@Module({ providers: [RandomSource], exports: [RandomSource] })
export class RandomModule {}
