import { describe, expect, it } from 'vitest';
import { decodePayload, decodePayloadInTurns, encodePayload } from '../../src/engine/documents/document-json.js';
import { parseJson } from '../../src/util/exact-json.js';
import { Yielder } from '../../src/util/yielder.js';

const turn = () => new Yielder(0).maybe();

describe('task payloads', () => {
  const docs = [
    { id: 1, text: 'line one\nline two\r\n\u2028\u2029 and "quotes", commas,\n' },
    { id: 'é', nested: { a: [1, { b: '\n' }] }, empty: {} },
    { id: 3, list: [], s: '},\n{' },
  ];

  it('hold one document a line, read back whole or a document at a time', async () => {
    const { bytes, exactIntegers } = encodePayload(docs);
    expect(exactIntegers).toBe(false);
    expect(bytes.toString().split('\n')).toHaveLength(docs.length + 2);
    expect(decodePayload(bytes, false)).toEqual(docs);
    expect(await decodePayloadInTurns(bytes, false, turn)).toEqual(docs);
  });

  it('keep big integers to the digit either way', async () => {
    const text = '[{"id": 18446744073709551615, "n": -9223372036854775808}, {"id": 2}]';
    const big = parseJson(text) as Record<string, unknown>[];
    const { bytes, exactIntegers } = encodePayload(big);
    expect(exactIntegers).toBe(true);
    const read = await decodePayloadInTurns(bytes, true, turn);
    expect(read).toEqual(big);
    expect(read[0]!['id']).toBe(18446744073709551615n);
  });

  it('read an empty list, many documents, and payloads logged before documents went one a line', async () => {
    expect(await decodePayloadInTurns(encodePayload([]).bytes, false, turn)).toEqual([]);
    const many = Array.from({ length: 1000 }, (_, i) => ({ id: i, t: `w${i}` }));
    expect(await decodePayloadInTurns(encodePayload(many).bytes, false, turn)).toEqual(many);
    const old = Buffer.from(JSON.stringify(docs));
    expect(await decodePayloadInTurns(old, false, turn)).toEqual(docs);
  });
});
