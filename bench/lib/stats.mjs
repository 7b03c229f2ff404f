// Small statistics helpers shared by the harness and the report.

/** Median of a list of numbers; NaN for an empty list. */
export function median(values) {
  return percentile(values, 50);
}

/**
 * The p-th percentile by the nearest-rank method on the raw samples. Percentiles are always
 * computed from raw samples, never averaged, so figures from two load generators can be merged.
 */
export function percentile(values, p) {
  if (values.length === 0) {
    return Number.NaN;
  }
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Rounds for display and JSON; keeps NaN/undefined as null so JSON stays valid. */
export function round(value, digits = 2) {
  if (value === undefined || value === null || !Number.isFinite(value)) {
    return null;
  }
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
