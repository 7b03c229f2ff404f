import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC_KEY = 'keygate:isPublic';

/** Opts a route out of the global bearer-token guard. Routes are protected unless marked. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC_KEY, true);
