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
export const PASSWORD_CHANGE = '/api/auth/password/change';
export const PASSWORD_FORGOT = '/api/auth/password/forgot';
export const PASSWORD_RESET = '/api/auth/password/reset';
export const EMAIL_VERIFY = '/api/auth/email/verify';
export const EMAIL_VERIFY_RESEND = '/api/auth/email/verify/resend';
export const EMAIL_CHANGE = '/api/auth/email/change';
