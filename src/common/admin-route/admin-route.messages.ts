/** The text every admin route shares, in the SPEC's language, listed in docs/api.md. */
export const AdminRouteMessages = {
  /** A valid admin key without the scope the route needs. */
  forbidden: 'La clave de administración no tiene el permiso necesario.',
} as const;
