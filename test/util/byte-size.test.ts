import { describe, expect, it } from 'vitest';
import { formatByteSize, parseByteSize } from '../../src/util/byte-size.js';

describe('byte sizes', () => {
  it('reads bytes, and numbers with binary or decimal units', () => {
    expect(parseByteSize(1000)).toBe(1000);
    expect(parseByteSize('24MiB')).toBe(24 * 1024 * 1024);
    expect(parseByteSize('20 MB')).toBe(20_000_000);
    expect(parseByteSize('1.5 kib')).toBe(1536);
    expect(parseByteSize('512')).toBe(512);
    expect(parseByteSize('2 GB')).toBe(2e9);
    for (const bad of ['lots', '', '-1', '1 XB', 1.5, -3, true, null, '1e3']) expect(parseByteSize(bad), String(bad)).toBeNull();
  });

  it('shows a size in the largest unit that shows it exactly', () => {
    expect(formatByteSize(20 * 1024 * 1024)).toBe('20 MiB');
    expect(formatByteSize(1000)).toBe('1 KB');
    expect(formatByteSize(2_000_000)).toBe('2 MB');
    expect(formatByteSize(1024)).toBe('1 KiB');
    expect(formatByteSize(123)).toBe('123 B');
    expect(formatByteSize(1500 * 1024 + 7)).toBe('1.46 MiB');
  });
});
