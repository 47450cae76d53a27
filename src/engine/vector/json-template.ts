// JSON templates of the `rest` embedder: `request` holds `{{text}}` (or `{{fragment}}` for an
// embedder with fragments) where a text goes and
// `response` holds `{{embedding}}` where an embedding is found. Inside an array, a first item
// followed by `{{..}}` is repeated once per text (request) or read once per embedding
// (response), which is how several texts travel in one request.

type Step = string | number;

export const TEXT = '{{text}}';
/** Where a rendered fragment goes, in the request of an embedder with fragments. */
export const FRAGMENT = '{{fragment}}';
export const EMBEDDING = '{{embedding}}';
export const REPEAT = '{{..}}';

/** A template that cannot be used, or a response that does not fit its template. */
export class TemplateError extends Error {}

function pathText(root: string, path: readonly Step[]): string {
  return '`' + root + path.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('') + '`';
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} \`${JSON.stringify(v)}\``;
}

interface Found {
  placeholders: Step[][];
  repeats: Step[][];
}

function scan(v: unknown, placeholder: string, path: Step[], out: Found): void {
  if (v === placeholder) out.placeholders.push(path);
  else if (v === REPEAT) out.repeats.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => scan(x, placeholder, [...path, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) scan(x, placeholder, [...path, k], out);
}

function setAt(target: unknown, path: readonly Step[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy = (Array.isArray(target) ? [...target] : { ...(target as Record<string, unknown>) }) as Record<string | number, unknown>;
  copy[head!] = setAt(copy[head!], rest, value);
  return copy;
}

export class InjectableValue {
  /** Where the single placeholder is, or where the repeated array is and where the placeholder sits in each item. */
  private readonly single: Step[] | null = null;
  private readonly arrayPath: Step[] = [];
  private readonly itemPath: Step[] = [];
  private readonly repeated: unknown;

  constructor(
    private readonly template: unknown,
    private readonly root: string,
    private readonly placeholder: string,
  ) {
    const found: Found = { placeholders: [], repeats: [] };
    scan(template, placeholder, [], found);
    if (found.repeats.length > 1) {
      throw new TemplateError(`in ${pathText(root, found.repeats[1]!)}: Found "${REPEAT}", but it was already present in ${pathText(root, found.repeats[0]!)}`);
    }
    const repeat = found.repeats[0];
    if (repeat) {
      const index = repeat[repeat.length - 1];
      if (typeof index !== 'number') throw new TemplateError(`in ${pathText(root, repeat)}: "${REPEAT}" appears outside of an array`);
      if (index !== 1) throw new TemplateError(`in ${pathText(root, repeat)}: "${REPEAT}" expected at position #1, but found at position #${index}`);
      this.arrayPath = repeat.slice(0, -1);
      const inItem = found.placeholders.filter((p) => this.arrayPath.every((s, i) => p[i] === s) && p[this.arrayPath.length] === 0);
      if (inItem.length === 0) throw new TemplateError(`in ${pathText(root, [...this.arrayPath, 0])}: Expected "${placeholder}" inside of the repeated value`);
      const outside = found.placeholders.find((p) => !inItem.includes(p));
      if (outside) throw new TemplateError(`in ${pathText(root, outside)}: Found "${placeholder}", but it was already present in ${pathText(root, inItem[0]!)} (repeated)`);
      if (inItem.length > 1) throw new TemplateError(`in ${pathText(root, inItem[1]!)}: Found "${placeholder}", but it was already present in ${pathText(root, inItem[0]!)}`);
      this.itemPath = inItem[0]!.slice(this.arrayPath.length + 1);
      this.repeated = this.arrayPath.reduce<unknown>((v, s) => (v as Record<string | number, unknown>)[s], template);
      this.repeated = (this.repeated as unknown[])[0];
      return;
    }
    if (found.placeholders.length === 0) throw new TemplateError(`in \`${root}\`: "${placeholder}" not found`);
    if (found.placeholders.length > 1) {
      throw new TemplateError(`in ${pathText(root, found.placeholders[1]!)}: Found "${placeholder}", but it was already present in ${pathText(root, found.placeholders[0]!)}`);
    }
    this.single = found.placeholders[0]!;
  }

  /** Whether the template carries many values at once. */
  get isArray(): boolean {
    return this.single === null;
  }

  inject(values: readonly unknown[]): unknown {
    if (this.single) return setAt(this.template, this.single, values[0]);
    return setAt(this.template, this.arrayPath, values.map((v) => setAt(this.repeated, this.itemPath, v)));
  }

  /** The values found where the placeholder stands in the template. */
  extract(value: unknown): unknown[] {
    if (this.single) return [this.follow(value, this.single, `extracting a single "${this.placeholder}"`)];
    const items = this.follow(value, this.arrayPath, `extracting the array of "${this.placeholder}"s`);
    if (!Array.isArray(items)) {
      throw new TemplateError(`in ${pathText(this.root, this.arrayPath)}, while extracting the array of "${this.placeholder}"s, configuration expects an array but server sent ${describe(items)}`);
    }
    return items.map((item, i) =>
      this.follow(item, this.itemPath, `extracting item #${i} from the array of "${this.placeholder}"s`, [...this.arrayPath, i]),
    );
  }

  private follow(value: unknown, path: readonly Step[], context: string, prefix: Step[] = []): unknown {
    let v = value;
    for (let i = 0; i < path.length; i++) {
      const step = path[i]!;
      const where = pathText(this.root, [...prefix, ...path.slice(0, i)]);
      if (typeof step === 'number') {
        if (!Array.isArray(v)) throw new TemplateError(`in ${where}, while ${context}, configuration expects an array with at least ${step + 1} item(s) but server sent ${describe(v)}`);
        if (step >= v.length) throw new TemplateError(`in ${where}, while ${context}, configuration expects item #${step}, which is missing in response`);
        v = v[step];
      } else {
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          throw new TemplateError(`in ${where}, while ${context}, configuration expects an object with key \`${step}\` but server sent ${describe(v)}`);
        }
        if (!(step in v)) throw new TemplateError(`in ${where}, while ${context}, configuration expects key "${step}", which is missing in response`);
        v = (v as Record<string, unknown>)[step];
      }
    }
    return v;
  }
}
