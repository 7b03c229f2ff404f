/** The paths of the service's routes, written once for every test that calls them. */
export const REGISTER = '/api/auth/register';
export const LOGIN = '/api/auth/login';
export const REFRESH = '/api/auth/refresh';
export const REVOKE = '/api/auth/revoke';
export const ME = '/api/auth/me';
export const SESSIONS = '/api/auth/sessions';
export const REVOKE_ALL_SESSIONS = '/api/auth/sessions/revoke-all';
export const HEALTH_LIVE = '/health/live';
export const HEALTH_READY = '/health/ready';
