/**
 * Sets `key` in `map`, first letting the oldest entry go when the map already holds `capacity`
 * other keys: a cache that never grows past its capacity (a Map keeps insertion order, so the
 * first key is the oldest).
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, capacity: number): void {
  if (map.size >= capacity && !map.has(key)) {
    const oldest = map.keys().next();
    if (oldest.done !== true) {
      map.delete(oldest.value);
    }
  }
  map.set(key, value);
}
