// The BERT tokenizer as described by a model's `tokenizer.json`: clean and lowercase the
// text (accents stripped when asked), split on whitespace and punctuation, then greedy
// longest-match WordPiece with `##` continuations, framed by [CLS] ... [SEP].

interface TokenizerJson {
  normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null; clean_text?: boolean } | null;
  model: { type?: string; vocab: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
  added_tokens?: { id: number; content: string }[];
}

function isPunctuation(ch: string): boolean {
  const c = ch.codePointAt(0)!;
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  return /\p{P}/u.test(ch);
}

function isCjk(c: number): boolean {
  return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

export class WordPiece {
  private readonly vocab: Map<string, number>;
  private readonly unk: string;
  private readonly prefix: string;
  private readonly maxChars: number;
  private readonly lowercase: boolean;
  private readonly stripAccents: boolean;
  readonly cls: number;
  readonly sep: number;

  constructor(json: TokenizerJson) {
    if (json.model.type !== undefined && json.model.type !== 'WordPiece') {
      throw new Error(`unsupported tokenizer model \`${json.model.type}\` (only WordPiece tokenizers are supported)`);
    }
    this.vocab = new Map(Object.entries(json.model.vocab));
    for (const t of json.added_tokens ?? []) this.vocab.set(t.content, t.id);
    this.unk = json.model.unk_token ?? '[UNK]';
    this.prefix = json.model.continuing_subword_prefix ?? '##';
    this.maxChars = json.model.max_input_chars_per_word ?? 100;
    this.lowercase = json.normalizer?.lowercase ?? true;
    // BERT strips accents whenever it lowercases, unless told otherwise.
    this.stripAccents = json.normalizer?.strip_accents ?? this.lowercase;
    const id = (t: string) => {
      const v = this.vocab.get(t);
      if (v === undefined) throw new Error(`tokenizer has no \`${t}\` token`);
      return v;
    };
    this.cls = id('[CLS]');
    this.sep = id('[SEP]');
  }

  private normalize(text: string): string {
    let t = '';
    for (const ch of text) {
      const c = ch.codePointAt(0)!;
      if (c === 0 || c === 0xfffd || (/\p{Cc}/u.test(ch) && !/\s/.test(ch))) continue;
      t += isCjk(c) ? ` ${ch} ` : /\s/.test(ch) ? ' ' : ch;
    }
    if (this.lowercase) t = t.toLowerCase();
    if (this.stripAccents) t = t.normalize('NFD').replace(/\p{Mn}/gu, '');
    return t;
  }

  private words(text: string): string[] {
    const out: string[] = [];
    for (const chunk of this.normalize(text).split(/\s+/)) {
      let cur = '';
      for (const ch of chunk) {
        if (isPunctuation(ch)) {
          if (cur) out.push(cur);
          out.push(ch);
          cur = '';
        } else cur += ch;
      }
      if (cur) out.push(cur);
    }
    return out;
  }

  private pieces(word: string): number[] {
    const chars = [...word];
    if (chars.length > this.maxChars) return [this.vocab.get(this.unk)!];
    const ids: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = (start > 0 ? this.prefix : '') + chars.slice(start, end).join('');
        found = this.vocab.get(piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) return [this.vocab.get(this.unk)!];
      ids.push(found);
      start = end;
    }
    return ids;
  }

  /** Token ids with [CLS] and [SEP], at most `maxLength` of them. */
  encode(text: string, maxLength: number): number[] {
    const ids = [this.cls];
    for (const w of this.words(text)) {
      for (const id of this.pieces(w)) {
        if (ids.length >= maxLength - 1) break;
        ids.push(id);
      }
    }
    ids.push(this.sep);
    return ids;
  }
}
