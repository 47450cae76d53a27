// What is wrong with a JSON text that JSON.parse refused, in the words of the reference's
// parser (serde_json): "key must be a string at line 1 column 14". Clients and people compare
// these messages with the reference's, and V8's own ("Expected property name or '}' in JSON at
// position 13") name neither line nor column. Runs only once a parse has failed, so it is
// written for clarity, not speed.
//
// Positions follow serde_json: lines from 1, columns in bytes from the start of the line; an
// error about a character not yet consumed (a peek) counts that character, one found after
// consuming it counts up to it, and the end of the text counts every byte.

import { lineAt, MAX_JSON_DEPTH } from './json-depth.js';

class Failure {
  constructor(
    readonly message: string,
    /** How many characters of the text come before the position reported. */
    readonly prefix: number,
  ) {}
}

const WS = new Set([' ', '\n', '\t', '\r']);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const SIMPLE_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

class Scanner {
  i = 0;
  private depthLeft = MAX_JSON_DEPTH + 1;

  constructor(private readonly t: string) {}

  private get n(): number {
    return this.t.length;
  }

  /** An error about the character at `i`, not consumed yet (or about the end of the text). */
  private peekFail(message: string): Failure {
    return new Failure(message, Math.min(this.n, this.i + 1));
  }

  /** An error found once the characters before `i` were consumed. */
  private fail(message: string): Failure {
    return new Failure(message, this.i);
  }

  ws(): void {
    while (this.i < this.n && WS.has(this.t[this.i]!)) this.i++;
  }

  value(): void {
    this.ws();
    if (this.i >= this.n) throw this.peekFail('EOF while parsing a value');
    const c = this.t[this.i]!;
    if (c === 'n') return this.ident('null');
    if (c === 't') return this.ident('true');
    if (c === 'f') return this.ident('false');
    if (c === '-' || isDigit(c)) return this.number();
    if (c === '"') {
      this.i++;
      return this.string();
    }
    if (c === '[' || c === '{') {
      if (--this.depthLeft === 0) throw this.peekFail('recursion limit exceeded');
      this.i++;
      if (c === '[') this.list();
      else this.object();
      this.depthLeft++;
      return;
    }
    throw this.peekFail('expected value');
  }

  private ident(word: string): void {
    this.i++;
    for (let k = 1; k < word.length; k++) {
      if (this.i >= this.n) throw this.fail('EOF while parsing a value');
      const c = this.t[this.i++];
      if (c !== word[k]) throw this.fail('expected ident');
    }
  }

  private number(): void {
    const numStart = this.i;
    if (this.t[this.i] === '-') this.i++;
    if (this.i >= this.n) throw this.fail('EOF while parsing a value');
    const first = this.t[this.i++]!;
    if (first === '0') {
      if (isDigit(this.t[this.i])) throw this.peekFail('invalid number');
    } else if (isDigit(first)) {
      while (isDigit(this.t[this.i])) this.i++;
    } else {
      throw this.fail('invalid number');
    }
    if (this.t[this.i] === '.') {
      this.i++;
      if (this.i >= this.n) throw this.peekFail('EOF while parsing a value');
      if (!isDigit(this.t[this.i])) throw this.peekFail('invalid number');
      while (isDigit(this.t[this.i])) this.i++;
    }
    if (this.t[this.i] === 'e' || this.t[this.i] === 'E') {
      this.i++;
      if (this.t[this.i] === '+' || this.t[this.i] === '-') this.i++;
      if (this.i >= this.n) throw this.peekFail('EOF while parsing a value');
      if (!isDigit(this.t[this.i])) throw this.peekFail('invalid number');
      while (isDigit(this.t[this.i])) this.i++;
    }
    if (!Number.isFinite(Number(this.t.slice(numStart, this.i)))) throw this.fail('number out of range');
  }

  private hex4(): number {
    if (this.i + 4 > this.n) {
      this.i = this.n;
      throw this.fail('EOF while parsing a string');
    }
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.t[this.i++];
      if (!isHex(c)) throw this.fail('invalid escape');
      v = v * 16 + parseInt(c!, 16);
    }
    return v;
  }

  private string(): void {
    for (;;) {
      if (this.i >= this.n) throw this.fail('EOF while parsing a string');
      const c = this.t[this.i++]!;
      if (c === '"') return;
      if (c === '\\') {
        if (this.i >= this.n) throw this.fail('EOF while parsing a string');
        const e = this.t[this.i++]!;
        if (SIMPLE_ESCAPES.has(e)) continue;
        if (e !== 'u') throw this.fail('invalid escape');
        const code = this.hex4();
        if (code >= 0xdc00 && code <= 0xdfff) throw this.fail('lone leading surrogate in hex escape');
        if (code >= 0xd800 && code <= 0xdbff) {
          if (this.t[this.i] !== '\\' || this.t[this.i + 1] !== 'u') {
            if (this.i >= this.n) throw this.fail('EOF while parsing a string');
            throw this.fail('unexpected end of hex escape');
          }
          this.i += 2;
          const low = this.hex4();
          if (low < 0xdc00 || low > 0xdfff) throw this.fail('lone leading surrogate in hex escape');
        }
        continue;
      }
      if (c.charCodeAt(0) < 0x20) throw this.fail('control character (\\u0000-\\u001F) found while parsing a string');
    }
  }

  private list(): void {
    this.ws();
    if (this.i >= this.n) throw this.peekFail('EOF while parsing a list');
    if (this.t[this.i] === ']') {
      this.i++;
      return;
    }
    this.value();
    for (;;) {
      this.ws();
      if (this.i >= this.n) throw this.peekFail('EOF while parsing a list');
      const c = this.t[this.i];
      if (c === ']') {
        this.i++;
        return;
      }
      if (c !== ',') throw this.peekFail('expected `,` or `]`');
      this.i++;
      this.ws();
      if (this.i >= this.n) throw this.peekFail('EOF while parsing a value');
      if (this.t[this.i] === ']') throw this.peekFail('trailing comma');
      this.value();
    }
  }

  private object(): void {
    this.ws();
    if (this.i >= this.n) throw this.peekFail('EOF while parsing an object');
    if (this.t[this.i] === '}') {
      this.i++;
      return;
    }
    for (;;) {
      if (this.t[this.i] !== '"') throw this.peekFail('key must be a string');
      this.i++;
      this.string();
      this.ws();
      if (this.i >= this.n) throw this.peekFail('EOF while parsing an object');
      if (this.t[this.i] !== ':') throw this.peekFail('expected `:`');
      this.i++;
      this.value();
      this.ws();
      if (this.i >= this.n) throw this.peekFail('EOF while parsing an object');
      const c = this.t[this.i];
      if (c === '}') {
        this.i++;
        return;
      }
      if (c !== ',') throw this.peekFail('expected `,` or `}`');
      this.i++;
      this.ws();
      if (this.i >= this.n) throw this.peekFail('EOF while parsing a value');
      if (this.t[this.i] === '}') throw this.peekFail('trailing comma');
    }
  }
}

/** `at line L column C` for the position after the first `prefix` characters of `text`. */
export function serdePosition(text: string, prefix: number): string {
  const { line, lineStart } = lineAt(text, prefix);
  return `at line ${line} column ${Buffer.byteLength(text.slice(lineStart, prefix))}`;
}

/** The first syntax error of `text` as serde_json words it, or null when the text is valid JSON. */
export function jsonSyntaxError(text: string): string | null {
  const s = new Scanner(text);
  try {
    s.value();
    s.ws();
    if (s.i < text.length) throw new Failure('trailing characters', s.i + 1);
    return null;
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    return `${e.message} ${serdePosition(text, e.prefix)}`;
  }
}

/** Where the one value of a valid JSON text ends (its trailing whitespace excluded). */
export function endOfValue(text: string): number {
  const s = new Scanner(text);
  s.value();
  return s.i;
}

/** serde's words for a value of the wrong type: `string "doggo"`, ``integer `1` ``, `map`, `unit value` (null)... */
export function serdeUnexpected(v: unknown): string {
  if (v === null) return 'unit value';
  if (Array.isArray(v)) return 'sequence';
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  if (typeof v === 'boolean') return `boolean \`${v}\``;
  if (typeof v === 'number') return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
  if (typeof v === 'bigint') return `integer \`${v}\``;
  return 'map';
}
