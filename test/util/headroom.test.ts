// Room in front of a buffer's contents for a header written later instead of a copy.

import { describe, expect, it } from 'vitest';
import { claimHeadroom, HEADROOM, withHeadroom } from '../../src/util/headroom.js';
import { decodeCommand, encodeCommand } from '../../src/tasks/command.js';
import { Yielder } from '../../src/util/yielder.js';

describe('headroom', () => {
  it('gives the bytes in front of the contents once, and leaves the contents alone', () => {
    const b = withHeadroom(5);
    b.set([1, 2, 3, 4, 5]);
    const whole = claimHeadroom(b, 9)!;
    expect(whole.length).toBe(14);
    whole.fill(7, 0, 9);
    expect([...whole.subarray(9)]).toEqual([1, 2, 3, 4, 5]);
    expect([...b]).toEqual([1, 2, 3, 4, 5]);
    // Claimed already: the same buffer proposed again is copied by its next user.
    expect(claimHeadroom(b, 9)).toBeNull();
  });

  it('gives none for other buffers, views not at the start, or more than there is', () => {
    expect(claimHeadroom(Buffer.from([1, 2, 3]), 1)).toBeNull();
    expect(claimHeadroom(new Uint8Array(64).subarray(16), 9)).toBeNull();
    const b = withHeadroom(8);
    expect(claimHeadroom(b.subarray(1), 9)).toBeNull();
    expect(claimHeadroom(b, HEADROOM + 1)).toBeNull();
    expect(claimHeadroom(b, HEADROOM)).not.toBeNull();
  });

  it('carries encoded commands, which decode as before', async () => {
    const payload = Buffer.from('{"id":1}\n{"id":2}');
    const data = await encodeCommand({ kind: 'noop' } as never);
    expect(decodeCommand(data)).toEqual({ kind: 'noop' });
    const cmd = decodeCommand(await encodeCommand({ kind: 'enqueue', payload } as never)) as unknown as { payload: Buffer };
    expect(cmd.payload.toString()).toBe(payload.toString());
    expect(claimHeadroom(await encodeCommand({ kind: 'noop' } as never), 9)).not.toBeNull();
  });

  it('encodes a command in turns to the same bytes as at once', async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 31) & 0xff;
    const cmd = { kind: 'enqueue', enqueuedAt: 5, spec: { type: 'documentAdditionOrUpdate' }, payload } as never;
    // A turn after every step, against none at all.
    const inTurns = await encodeCommand(cmd, new Yielder(0));
    expect(Buffer.compare(inTurns, await encodeCommand(cmd, new Yielder(Infinity)))).toBe(0);
    expect(claimHeadroom(inTurns, 9)).not.toBeNull();
  });
});
