import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/** UUID version 7: time-ordered, as the reference uses for `requestUid`. */
export function uuidv7(now = Date.now()): string {
  const b = randomBytes(16);
  if (now === lastMs) seq = (seq + 1) & 0xfff;
  else {
    lastMs = now;
    seq = b.readUInt16BE(6) & 0xfff;
  }
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
