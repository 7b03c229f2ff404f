import { Injectable } from '@nestjs/common';
import type { AccessTokenClaims } from '../../src/common/decorators/current-user.decorator.js';
import { GreetingResponseDto } from './dto/greeting-response.dto.js';

@Injectable()
export class GreetingService {
  greetAnyone(): GreetingResponseDto {
    return { greeting: 'Hello, world!' };
  }

  greet(user: AccessTokenClaims): GreetingResponseDto {
    return { greeting: `Hello, ${user.email}!`, userId: user.sub };
  }
}
