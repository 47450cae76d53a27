// Byte sizes as the reference reads and shows them (`payloadSize: "24MiB"`, `"20 MB"`, 1000).

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** An integer number of bytes, or a number and a unit (`24MiB`, `1.5 GB`, units case-insensitive); null when unreadable. */
export function parseByteSize(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : null;
  if (typeof v !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
  if (!m) return null;
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const n = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(n) ? n : null;
}

/** The largest unit, binary or decimal, that shows the size exactly (`20 MiB`, `1 KB`), else binary with two decimals. */
export function formatByteSize(n: number): string {
  const pick = (base: number, names: string[]) => {
    for (let p = names.length - 1; p >= 1; p--) if (n >= base ** p && n % base ** p === 0) return { p, text: `${n / base ** p} ${names[p]}` };
    return { p: 0, text: `${n} B` };
  };
  const bin = pick(1024, ['B', 'KiB', 'MiB', 'GiB', 'TiB']);
  const dec = pick(1000, ['B', 'KB', 'MB', 'GB', 'TB']);
  if (bin.p > 0 || dec.p > 0) return bin.p >= dec.p ? bin.text : dec.text;
  for (let p = 4; p >= 1; p--) {
    if (n >= 1024 ** p) return `${Number((n / 1024 ** p).toFixed(2))} ${['B', 'KiB', 'MiB', 'GiB', 'TiB'][p]}`;
  }
  return `${n} B`;
}
