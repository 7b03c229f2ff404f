import { Controller, Get, Req, UseGuards } from '@nestjs/common';
import { KeygateAuthGuard, type KeygateRequest } from './keygate-auth.guard.js';

@Controller('orders')
@UseGuards(KeygateAuthGuard)
export class OrdersController {
  @Get()
  list(@Req() request: KeygateRequest): { userId: string | undefined; orders: string[] } {
    return { userId: request.keygate?.userId, orders: [] };
  }
}
