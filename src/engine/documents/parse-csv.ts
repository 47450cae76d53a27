import type { Doc } from './primary-key.js';
import { integerValue } from '../../util/exact-json.js';

type ColumnType = 'string' | 'number' | 'boolean';

interface Column {
  name: string;
  type: ColumnType;
}

function parseHeader(h: string): Column {
  const i = h.lastIndexOf(':');
  if (i >= 0) {
    const t = h.slice(i + 1).trim();
    if (t === 'string' || t === 'number' || t === 'boolean') return { name: h.slice(0, i), type: t };
  }
  return { name: h, type: 'string' };
}

const INTEGER = /^[+-]?\d+$/;

/** Splits CSV text into records (RFC 4180: quoted fields, doubled quotes, CRLF or LF). */
function* records(text: string, delim: string): Generator<string[]> {
  let i = 0;
  const n = text.length;
  while (i < n) {
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new Error('CSV error: unterminated quoted field');
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
            } else {
              i++;
              break;
            }
          } else {
            field += c;
            i++;
          }
        }
        while (i < n && text[i] !== delim && text[i] !== '\n' && text[i] !== '\r') field += text[i++];
      } else {
        while (i < n && text[i] !== delim && text[i] !== '\n' && text[i] !== '\r') field += text[i++];
      }
      fields.push(field);
      if (i < n && text[i] === delim) {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    if (fields.length === 1 && fields[0] === '') continue; // blank line
    yield fields;
  }
}

/** CSV with typed headers (`price:number`, `active:boolean`); empty cells become null. */
export function parseCsv(text: string, delim: string): Doc[] {
  const it = records(text.replace(/^\uFEFF/, ''), delim);
  const head = it.next();
  if (head.done) return [];
  const columns = head.value.map(parseHeader);
  const docs: Doc[] = [];
  let line = 1;
  for (const rec of it) {
    line++;
    if (rec.length !== columns.length) {
      throw new Error(
        `CSV error: record ${line - 1} (line ${line}): found record with ${rec.length} fields, but the previous record has ${columns.length} fields`,
      );
    }
    const doc: Doc = {};
    columns.forEach((col, j) => {
      const cell = rec[j]!;
      if (cell === '') {
        doc[col.name] = null;
        return;
      }
      if (col.type === 'number') {
        const t = cell.trim();
        // An integer keeps every digit, up to the u64 maximum and down to the i64 minimum, as in JSON.
        const num = INTEGER.test(t) ? integerValue(t.replace(/^\+/, '')) : Number(t);
        if (t === '' || (typeof num === 'number' && !Number.isFinite(num))) {
          throw new Error(`CSV error: line ${line}: could not parse \`${cell}\` as a number in column \`${col.name}\``);
        }
        doc[col.name] = num;
      } else if (col.type === 'boolean') {
        const t = cell.trim().toLowerCase();
        if (t !== 'true' && t !== 'false') {
          throw new Error(`CSV error: line ${line}: could not parse \`${cell}\` as a boolean in column \`${col.name}\``);
        }
        doc[col.name] = t === 'true';
      } else {
        doc[col.name] = cell;
      }
    });
    docs.push(doc);
  }
  return docs;
}
