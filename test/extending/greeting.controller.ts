import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../../src/common/decorators/current-user.decorator.js';
import { Public } from '../../src/common/decorators/public.decorator.js';
import { ApiErrorResponses } from '../../src/common/swagger/api-error-responses.decorator.js';
import { GreetingResponseDto } from './dto/greeting-response.dto.js';
import { GreetingService } from './greeting.service.js';

@ApiTags('greetings')
@Controller('greetings')
export class GreetingController {
  constructor(private readonly greetingService: GreetingService) {}

  /** Open to anyone: `@Public()` opts out of the global bearer-token guard. */
  @Public()
  @Get('hello')
  hello(): GreetingResponseDto {
    return this.greetingService.greetAnyone();
  }

  /** Protected by default: without a valid access token the guard answers 401. */
  @Get('me')
  @ApiBearerAuth()
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  me(@CurrentUser() user: AccessTokenClaims): GreetingResponseDto {
    return this.greetingService.greet(user);
  }
}
