/**
 * Texts of the admin API (src/admin/http), in the SPEC's language, listed in docs/api.md. Here,
 * beside AdminService, because the service and the API's guard both answer with them.
 */
export const AdminApiMessages = {
  sessionNotFound: 'Sesión no encontrada.',
  mfaWithPrefix: 'El filtro state=mfa no se combina con emailPrefix.',
  badCursor: 'El cursor no es válido.',
  badInstant: 'La fecha no es válida.',
} as const;
