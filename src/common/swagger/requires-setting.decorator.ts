import { ApiExtension } from '@nestjs/swagger';

/** The OpenAPI extension naming the setting without which an operation does not exist. */
export const REQUIRES_SETTING_EXTENSION = 'x-keygate-requires';

/**
 * Marks every operation of a controller mounted only when `setting` is configured (sign-in
 * through other providers: Federation__Providers). The documents list these operations with
 * the extension, and say so in their description (buildOpenApiDocument); without the setting
 * the routes answer as any unknown path.
 */
export function RequiresSetting(setting: string): ClassDecorator {
  return ApiExtension(REQUIRES_SETTING_EXTENSION, setting) as ClassDecorator;
}
