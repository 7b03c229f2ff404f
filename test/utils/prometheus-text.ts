/** One scrape in the Prometheus text format: every sample, by name and labels. */
export class Exposition {
  private readonly samples = new Map<string, number>();

  constructor(readonly text: string) {
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) {
        continue;
      }
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
      if (match === null) {
        throw new Error(`Not a sample line: ${line}`);
      }
      const [, name, labelText = '', value] = match;
      this.samples.set(keyOf(name, parseLabels(labelText)), Number(value));
    }
  }

  /** The sample's value; undefined when the scrape has no such series. */
  get(name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
    return this.samples.get(keyOf(name, labels));
  }

  /** Every label set of the series called `name`. */
  labelSets(name: string): Record<string, string>[] {
    return [...this.samples.keys()]
      .filter((key) => key.startsWith(`${name}{`))
      .map((key) => parseLabels(key.slice(name.length + 1, -1)));
  }

  /** How much each sample grew since `earlier`; a series absent then counts from 0. */
  delta(earlier: Exposition, name: string, labels: Readonly<Record<string, string>> = {}): number {
    const now = this.get(name, labels);
    if (now === undefined) {
      throw new Error(`No sample ${keyOf(name, labels)} in the scrape`);
    }
    return now - (earlier.get(name, labels) ?? 0);
  }
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [, label, value] of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    labels[label] = value.replace(/\\(.)/g, (_escape, character: string) =>
      character === 'n' ? '\n' : character,
    );
  }
  return labels;
}

function keyOf(name: string, labels: Readonly<Record<string, string>>): string {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  return `${name}{${entries.map(([label, value]) => `${label}=${JSON.stringify(value)}`).join(',')}}`;
}
