/**
 * How long a readiness check may take before it counts as down. Shorter than the connection
 * and statement timeouts, so a probe answers 503 while a request would still be waiting; an
 * orchestrator's probe timeout must be longer (3 s or more).
 */
export const READINESS_TIMEOUT_MS = 2_000;
