// A bound on how deeply a JSON text nests, checked before it is parsed.
//
// V8's JSON.parse accepts any depth, but much of what runs on a parsed value afterwards
// recurses (flattening documents, formatting hits, JSON.stringify itself), and a value nested
// ten thousand levels deep overflows the stack there. Refusing such texts up front keeps every
// later walk of a request value shallow.

/**
 * Arrays and objects a JSON value may nest, as the reference's parser (serde_json) allows:
 * its recursion limit of 128 refuses the 128th level that opens.
 */
export const MAX_JSON_DEPTH = 127;

export interface DepthExceeded {
  /** 1-based line and column of the bracket that opened one level too many. */
  line: number;
  column: number;
}

export interface JsonShape {
  /** Where the text first nests too deep, or null. */
  tooDeep: DepthExceeded | null;
  /**
   * A run of 16 digits or more outside strings: the text may hold an integer a double cannot
   * hold exactly (see exact-json.ts). False says surely not.
   */
  longNumbers: boolean;
}

/**
 * Where `text` first nests deeper than `max`, or null. Brackets inside strings do not count.
 * With `perLine`, every line starts again at depth 0 (NDJSON: a value a line).
 */
export function jsonDepthExceeded(text: string, max = MAX_JSON_DEPTH, perLine = false): DepthExceeded | null {
  return jsonShape(text, max, perLine).tooDeep;
}

/**
 * `jsonDepthExceeded`, and on the same pass whether long numbers stand outside strings: a
 * document payload is read once for both (this costs the scan nothing measurable; a separate
 * search for them costs a sixth of parsing).
 */
export function jsonShape(text: string, max = MAX_JSON_DEPTH, perLine = false): JsonShape {
  let depth = 0;
  let inString = false;
  let digits = 0;
  let longNumbers = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      else if (c === 0x0a && perLine) inString = false; // a raw newline cannot be in a JSON string
      continue;
    }
    if (c >= 0x30 && c <= 0x39) {
      if (++digits === 16) longNumbers = true;
      continue;
    }
    digits = 0;
    if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return { tooDeep: positionOf(text, i), longNumbers };
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      if (depth > 0) depth--;
    } else if (c === 0x0a && perLine) depth = 0;
  }
  return { tooDeep: null, longNumbers };
}

/** The bracket's line, and its column in bytes as the reference's parser counts them (`é` is two). */
function positionOf(text: string, index: number): DepthExceeded {
  const { line, lineStart } = lineAt(text, index);
  return { line, column: Buffer.byteLength(text.slice(lineStart, index)) + 1 };
}

/** The 1-based line holding `text[index]` (or the end, when `index` is the length) and where that line starts. */
export function lineAt(text: string, index: number): { line: number; lineStart: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, lineStart };
}

/** The parser's words for a too-deep text, as the reference's parser words them. */
export function depthMessage(at: DepthExceeded): string {
  return `recursion limit exceeded at line ${at.line} column ${at.column}`;
}
