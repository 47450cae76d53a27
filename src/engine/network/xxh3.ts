// XXH3, 64-bit, seed 0 and the default secret: the hash the reference engine's sharding uses
// (rendezvous hashing of each document id over the shard names), so that a Trine instance and
// a reference instance agree on which shard owns a document. Written from the published XXH3
// algorithm; 64-bit arithmetic is done on BigInt, kept to the few operations a hash needs.

const M64 = (1n << 64n) - 1n;

const P32_1 = 0x9e3779b1n;
const P32_2 = 0x85ebca77n;
const P32_3 = 0xc2b2ae3dn;
const P64_1 = 0x9e3779b185ebca87n;
const P64_2 = 0xc2b2ae3d27d4eb4fn;
const P64_3 = 0x165667b19e3779f9n;
const P64_4 = 0x85ebca77c2b2ae63n;
const P64_5 = 0x27d4eb2f165667c5n;
const PRIME_MX1 = 0x165667919e3779f9n;
const PRIME_MX2 = 0x9fb21c651e98df25n;

/** The default secret of XXH3 (192 bytes). */
const SECRET = Uint8Array.from([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
  0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
  0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
  0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
  0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
  0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
  0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
  0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
  0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
  0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
  0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
  0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
]);
const SECRET_VIEW = new DataView(SECRET.buffer);

function r32(v: DataView, p: number): bigint {
  return BigInt(v.getUint32(p, true));
}
function r64(v: DataView, p: number): bigint {
  return v.getBigUint64(p, true);
}
const s32 = (p: number) => r32(SECRET_VIEW, p);
const s64 = (p: number) => r64(SECRET_VIEW, p);

const mul = (a: bigint, b: bigint) => (a * b) & M64;
const add = (a: bigint, b: bigint) => (a + b) & M64;
const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & M64;

function swap32(x: bigint): bigint {
  return ((x & 0xffn) << 24n) | ((x & 0xff00n) << 8n) | ((x >> 8n) & 0xff00n) | ((x >> 24n) & 0xffn);
}
function swap64(x: bigint): bigint {
  return (swap32(x & 0xffffffffn) << 32n) | swap32(x >> 32n);
}

/** The low and high halves of the 128-bit product, folded by xor. */
function mulFold(a: bigint, b: bigint): bigint {
  const p = a * b;
  return (p & M64) ^ (p >> 64n);
}

function avalanche64(h: bigint): bigint {
  h ^= h >> 33n;
  h = mul(h, P64_2);
  h ^= h >> 29n;
  h = mul(h, P64_3);
  return h ^ (h >> 32n);
}

function avalanche(h: bigint): bigint {
  h ^= h >> 37n;
  h = mul(h, PRIME_MX1);
  return h ^ (h >> 32n);
}

function rrmxmx(h: bigint, len: number): bigint {
  h ^= rotl(h, 49n) ^ rotl(h, 24n);
  h = mul(h, PRIME_MX2);
  h ^= add(h >> 35n, BigInt(len));
  h = mul(h, PRIME_MX2);
  return h ^ (h >> 28n);
}

function mix16(v: DataView, p: number, s: number): bigint {
  return mulFold(r64(v, p) ^ s64(s), r64(v, p + 8) ^ s64(s + 8));
}

function upTo16(b: Uint8Array, v: DataView): bigint {
  const len = b.length;
  if (len > 8) {
    const lo = r64(v, 0) ^ (s64(24) ^ s64(32));
    const hi = r64(v, len - 8) ^ (s64(40) ^ s64(48));
    return avalanche(add(add(add(BigInt(len), swap64(lo)), hi), mulFold(lo, hi)));
  }
  if (len >= 4) {
    const input64 = add(r32(v, len - 4), r32(v, 0) << 32n);
    return rrmxmx(input64 ^ (s64(8) ^ s64(16)), len);
  }
  if (len > 0) {
    const combined = (BigInt(b[0]!) << 16n) | (BigInt(b[len >> 1]!) << 24n) | BigInt(b[len - 1]!) | (BigInt(len) << 8n);
    return avalanche64(combined ^ (s32(0) ^ s32(4)));
  }
  return avalanche64(s64(56) ^ s64(64));
}

function upTo128(v: DataView, len: number): bigint {
  let acc = mul(BigInt(len), P64_1);
  if (len > 32) {
    if (len > 64) {
      if (len > 96) acc = add(add(acc, mix16(v, 48, 96)), mix16(v, len - 64, 112));
      acc = add(add(acc, mix16(v, 32, 64)), mix16(v, len - 48, 80));
    }
    acc = add(add(acc, mix16(v, 16, 32)), mix16(v, len - 32, 48));
  }
  acc = add(add(acc, mix16(v, 0, 0)), mix16(v, len - 16, 16));
  return avalanche(acc);
}

function upTo240(v: DataView, len: number): bigint {
  let acc = mul(BigInt(len), P64_1);
  for (let i = 0; i < 8; i++) acc = add(acc, mix16(v, 16 * i, 16 * i));
  acc = avalanche(acc);
  let end = mix16(v, len - 16, 136 - 17);
  for (let i = 8; i < Math.floor(len / 16); i++) end = add(end, mix16(v, 16 * i, 16 * (i - 8) + 3));
  return avalanche(add(acc, end));
}

function accumulate512(acc: bigint[], v: DataView, p: number, s: number): void {
  for (let i = 0; i < 8; i++) {
    const data = r64(v, p + 8 * i);
    const key = data ^ s64(s + 8 * i);
    acc[i ^ 1] = add(acc[i ^ 1]!, data);
    acc[i] = add(acc[i]!, (key & 0xffffffffn) * (key >> 32n));
  }
}

function scramble(acc: bigint[], s: number): void {
  for (let i = 0; i < 8; i++) {
    let a = acc[i]!;
    a ^= a >> 47n;
    a ^= s64(s + 8 * i);
    acc[i] = mul(a, P32_1);
  }
}

function long(v: DataView, len: number): bigint {
  const acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1];
  const stripesPerBlock = (SECRET.length - 64) / 8;
  const blockLen = 64 * stripesPerBlock;
  const blocks = Math.floor((len - 1) / blockLen);
  for (let n = 0; n < blocks; n++) {
    for (let s = 0; s < stripesPerBlock; s++) accumulate512(acc, v, n * blockLen + s * 64, s * 8);
    scramble(acc, SECRET.length - 64);
  }
  const stripes = Math.floor((len - 1 - blockLen * blocks) / 64);
  for (let s = 0; s < stripes; s++) accumulate512(acc, v, blocks * blockLen + s * 64, s * 8);
  accumulate512(acc, v, len - 64, SECRET.length - 64 - 7);
  let result = mul(BigInt(len), P64_1);
  for (let i = 0; i < 4; i++) result = add(result, mulFold(acc[2 * i]! ^ s64(11 + 16 * i), acc[2 * i + 1]! ^ s64(11 + 16 * i + 8)));
  return avalanche(result);
}

/** XXH3-64 of `bytes` (seed 0, default secret), as an unsigned 64-bit integer. */
export function xxh3(bytes: Uint8Array): bigint {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = bytes.length;
  if (len <= 16) return upTo16(bytes, v);
  if (len <= 128) return upTo128(v, len);
  if (len <= 240) return upTo240(v, len);
  return long(v, len);
}
