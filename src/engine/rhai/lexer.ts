// Tokens of the Rhai language subset that document edition functions use (see `parser.ts`).

export class RhaiError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(line > 0 ? `${message} (line ${line}, position ${column})` : message);
    this.name = 'RhaiError';
  }
}

export type TokenKind = 'int' | 'float' | 'string' | 'template' | 'char' | 'ident' | 'punct' | 'eof';

export interface Token {
  kind: TokenKind;
  /** The text for identifiers and punctuation, the value for literals. */
  value: string;
  /** For `template`: the literal parts and the source of each `${…}`. */
  parts?: { text: string[]; exprs: { src: string; line: number; column: number }[] };
  line: number;
  column: number;
}

// Longest first: the lexer takes the first that matches.
const PUNCTUATION = [
  '**=', '<<=', '>>=', '..=', '?.', '?[', '??',
  '==', '!=', '<=', '>=', '&&', '||', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '**', '<<', '>>', '..', '::', '=>', '#{',
  '+', '-', '*', '/', '%', '=', '<', '>', '!', '&', '|', '^', '(', ')', '[', ']', '{', '}', ',', ';', ':', '.', '?', '@', '$', '~', '#',
];

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', '\\': '\\', '"': '"', "'": "'", '`': '`' };

export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const fail = (msg: string, at = i): never => {
    throw new RhaiError(msg, line, at - lineStart + 1);
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      // Rhai block comments nest.
      let depth = 0;
      do {
        if (src.startsWith('/*', i)) {
          depth++;
          i += 2;
        } else if (src.startsWith('*/', i)) {
          depth--;
          i += 2;
        } else {
          if (src[i] === '\n') {
            line++;
            lineStart = i + 1;
          }
          i++;
        }
        if (i >= src.length && depth > 0) fail('Unterminated comment');
      } while (depth > 0);
      continue;
    }
    const col = i - lineStart + 1;
    if (/[0-9]/.test(c)) {
      const start = i;
      if (c === '0' && /[xob]/.test(src[i + 1] ?? '')) {
        const base = src[i + 1] === 'x' ? 16 : src[i + 1] === 'o' ? 8 : 2;
        i += 2;
        const digits = base === 16 ? /[0-9a-fA-F_]/ : base === 8 ? /[0-7_]/ : /[01_]/;
        while (i < src.length && digits.test(src[i]!)) i++;
        const text = src.slice(start + 2, i).replace(/_/g, '');
        if (text === '') fail('Invalid number: missing digits', start);
        out.push({ kind: 'int', value: BigInt((base === 16 ? '0x' : base === 8 ? '0o' : '0b') + text).toString(), line, column: col });
        continue;
      }
      while (i < src.length && /[0-9_]/.test(src[i]!)) i++;
      let float = false;
      // `1..5` is a range, `x.1` never happens: a dot followed by a digit makes a float.
      if (src[i] === '.' && /[0-9]/.test(src[i + 1] ?? '')) {
        float = true;
        i++;
        while (i < src.length && /[0-9_]/.test(src[i]!)) i++;
      }
      if (/[eE]/.test(src[i] ?? '') && /[0-9+-]/.test(src[i + 1] ?? '')) {
        float = true;
        i += 2;
        while (i < src.length && /[0-9]/.test(src[i]!)) i++;
      }
      const text = src.slice(start, i).replace(/_/g, '');
      out.push({ kind: float ? 'float' : 'int', value: text, line, column: col });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < src.length && /[A-Za-z0-9_]/.test(src[i]!)) i++;
      out.push({ kind: 'ident', value: src.slice(start, i), line, column: col });
      continue;
    }
    if (c === '"' || c === "'") {
      const start = i;
      i++;
      let text = '';
      while (src[i] !== c) {
        if (i >= src.length || src[i] === '\n') fail(c === '"' ? 'Unterminated string literal' : 'Unterminated character literal', start);
        if (src[i] === '\\') {
          const e = src[i + 1] ?? '';
          if (e === 'u' || e === 'x') {
            const len = e === 'x' ? 2 : 4;
            const hex = src.slice(i + 2, i + 2 + len);
            if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail(`Invalid escape sequence: \\${e}${hex}`);
            text += String.fromCodePoint(parseInt(hex, 16));
            i += 2 + len;
            continue;
          }
          if (!(e in ESCAPES)) fail(`Invalid escape sequence: \\${e}`);
          text += ESCAPES[e];
          i += 2;
          continue;
        }
        text += src[i];
        i++;
      }
      i++;
      if (c === "'" && [...text].length !== 1) fail('Invalid character literal: a character holds exactly one character', start);
      out.push({ kind: c === '"' ? 'string' : 'char', value: text, line, column: col });
      continue;
    }
    if (c === '`') {
      // A template: `text ${expr} text`, multi-line.
      const start = i;
      i++;
      const text: string[] = [''];
      const exprs: { src: string; line: number; column: number }[] = [];
      while (src[i] !== '`') {
        if (i >= src.length) fail('Unterminated string literal', start);
        if (src.startsWith('${', i)) {
          const exprLine = line;
          const exprCol = i + 2 - lineStart + 1;
          let depth = 1;
          let j = i + 2;
          while (j < src.length && depth > 0) {
            if (src[j] === '{') depth++;
            else if (src[j] === '}') depth--;
            if (depth > 0) j++;
          }
          if (depth > 0) fail('Unterminated string interpolation', i);
          exprs.push({ src: src.slice(i + 2, j), line: exprLine, column: exprCol });
          text.push('');
          i = j + 1;
          continue;
        }
        if (src[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
        text[text.length - 1] += src[i];
        i++;
      }
      i++;
      out.push({ kind: 'template', value: '', parts: { text, exprs }, line, column: col });
      continue;
    }
    const p = PUNCTUATION.find((x) => src.startsWith(x, i));
    if (!p) fail(`Unknown character: '${c}'`);
    out.push({ kind: 'punct', value: p!, line, column: col });
    i += p!.length;
  }
  out.push({ kind: 'eof', value: '', line, column: i - lineStart + 1 });
  return out;
}
