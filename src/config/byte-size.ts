const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** Parses "100 MB", "100MB", "1 GiB" or a plain byte count. Returns null when malformed. */
export function parseByteSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) return null;
  const unit = (m[2] || 'b').toLowerCase();
  const mult = UNITS[unit];
  if (mult === undefined) return null;
  const n = Math.floor(Number(m[1]) * mult);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** The reference prints binary units when the limit is a multiple of 1024, decimal otherwise. */
export function formatByteSize(bytes: number): string {
  const bin = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const dec = ['B', 'KB', 'MB', 'GB', 'TB'];
  const binary = bytes % 1024 === 0;
  const base = binary ? 1024 : 1000;
  const names = binary ? bin : dec;
  let v = bytes;
  let i = 0;
  while (v >= base && i < names.length - 1) {
    v /= base;
    i++;
  }
  const shown = Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, '');
  return `${shown} ${names[i]}`;
}
