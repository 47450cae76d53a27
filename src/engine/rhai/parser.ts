// A parser for the Rhai subset that document edition functions are written in: statements
// (`let`/`const`, `if`/`else`, `while`, `loop`, `do … while|until`, `for … in`, `break`,
// `continue`, `return`, `throw`, `try`/`catch`, `fn` definitions), expressions (literals,
// `${}` templates, arrays, `#{}` maps, property and index access, calls and method calls,
// closures, ranges, every arithmetic, comparison, logical, bitwise and assignment operator,
// `in`, `??`, `?.`). What Rhai has beyond that (`switch`, modules, `this`, function pointers)
// is refused with an error naming the construct.

import { RhaiError, tokenize, type Token } from './lexer.js';

export interface Pos {
  line: number;
  column: number;
}

export type Expr = Pos &
  (
    | { t: 'lit'; v: unknown }
    | { t: 'tpl'; parts: string[]; exprs: Expr[] }
    | { t: 'var'; name: string }
    | { t: 'arr'; items: Expr[] }
    | { t: 'map'; entries: [string, Expr][] }
    | { t: 'prop'; obj: Expr; name: string; safe: boolean }
    | { t: 'idx'; obj: Expr; index: Expr; safe: boolean }
    | { t: 'call'; name: string; args: Expr[] }
    | { t: 'method'; obj: Expr; name: string; args: Expr[]; safe: boolean }
    | { t: 'unary'; op: string; e: Expr }
    | { t: 'bin'; op: string; l: Expr; r: Expr }
    | { t: 'assign'; op: string; target: Expr; value: Expr }
    | { t: 'range'; from: Expr; to: Expr; inclusive: boolean }
    | { t: 'closure'; params: string[]; body: Stmt[] }
    | { t: 'if'; cond: Expr; then: Stmt[]; else: Stmt[] | null }
    | { t: 'block'; body: Stmt[] }
  );

export type Stmt = Pos &
  (
    | { t: 'let'; name: string; e: Expr | null; constant: boolean }
    | { t: 'expr'; e: Expr; terminated: boolean }
    | { t: 'while'; cond: Expr; body: Stmt[] }
    | { t: 'loop'; body: Stmt[] }
    | { t: 'do'; body: Stmt[]; cond: Expr; until: boolean }
    | { t: 'for'; item: string; index: string | null; iter: Expr; body: Stmt[] }
    | { t: 'break'; e: Expr | null }
    | { t: 'continue' }
    | { t: 'return'; e: Expr | null }
    | { t: 'throw'; e: Expr | null }
    | { t: 'try'; body: Stmt[]; name: string | null; handler: Stmt[] }
    | { t: 'fn'; name: string; params: string[]; body: Stmt[] }
  );

export interface Script {
  body: Stmt[];
  functions: Map<string, Extract<Stmt, { t: 'fn' }>>;
}

/** Keywords Rhai reserves for what this subset does not run: a clear refusal beats a confusing parse error. */
const UNSUPPORTED: Record<string, string> = {
  switch: '`switch` expressions',
  import: 'modules (`import`)',
  export: 'modules (`export`)',
  private: '`private` functions',
  this: '`this`',
  Fn: 'function pointers (`Fn`)',
  call: 'function pointers (`call`)',
  curry: 'function pointers (`curry`)',
  is_shared: 'shared values',
  shared: 'shared values',
  sync: 'shared values',
  go: '`go`',
  spawn: '`spawn`',
  thread: '`thread`',
  static: '`static`',
  await: '`await`',
  async: '`async`',
  goto: '`goto`',
  exit: '`exit`',
  eval: '`eval`',
};

const KEYWORDS = new Set(['let', 'const', 'if', 'else', 'while', 'loop', 'do', 'until', 'for', 'in', 'break', 'continue', 'return', 'throw', 'try', 'catch', 'fn', 'true', 'false']);

const BINARY: [string[], number][] = [
  [['??'], 1],
  [['||'], 2],
  [['&&'], 3],
  [['|'], 4],
  [['^'], 5],
  [['&'], 6],
  [['==', '!='], 7],
  [['<', '>', '<=', '>=', 'in', '!in'], 8],
  [['..', '..='], 9],
  [['<<', '>>'], 10],
  [['+', '-'], 11],
  [['*', '/', '%'], 12],
  [['**'], 13],
];
const PRECEDENCE = new Map<string, number>(BINARY.flatMap(([ops, p]) => ops.map((o) => [o, p] as [string, number])));
const ASSIGN = new Set(['=', '+=', '-=', '*=', '/=', '%=', '**=', '<<=', '>>=', '&=', '|=', '^=']);
const MAX_DEPTH = 100;

class Parser {
  private i = 0;
  private depth = 0;
  readonly functions = new Map<string, Extract<Stmt, { t: 'fn' }>>();

  constructor(private readonly tokens: Token[]) {}

  private get tok(): Token {
    return this.tokens[this.i]!;
  }

  private atEof(): boolean {
    return this.tokens[this.i]!.kind === 'eof';
  }

  /** At `end`: the closing brace of a block, or the end of the script. */
  private atEnd(end: '}' | 'eof'): boolean {
    return end === 'eof' ? this.atEof() : this.is('}');
  }

  private found(): string {
    return this.atEof() ? '' : `, found '${this.show(this.tok)}'`;
  }

  private fail(msg: string, at: Token = this.tok): never {
    throw new RhaiError(msg, at.line, at.column);
  }

  private is(value: string): boolean {
    const t = this.tok;
    return (t.kind === 'punct' || t.kind === 'ident') && t.value === value;
  }

  private eat(value: string): boolean {
    if (!this.is(value)) return false;
    this.i++;
    return true;
  }

  private expect(value: string, what: string): Token {
    const t = this.tok;
    if (!this.is(value)) this.fail(`Expecting '${value}' ${what}${t.kind === 'eof' ? '' : `, found '${this.show(t)}'`}`);
    this.i++;
    return t;
  }

  private show(t: Token): string {
    if (t.kind === 'string') return JSON.stringify(t.value);
    if (t.kind === 'template') return '`…`';
    return t.value;
  }

  private ident(what: string): string {
    const t = this.tok;
    if (t.kind !== 'ident' || KEYWORDS.has(t.value)) this.fail(`Expecting ${what}${t.kind === 'eof' ? '' : `, found '${this.show(t)}'`}`);
    this.refuse(t);
    this.i++;
    return t.value;
  }

  private refuse(t: Token): void {
    if (t.kind === 'ident' && t.value in UNSUPPORTED) this.fail(`${UNSUPPORTED[t.value]} are not supported in document edition functions`, t);
  }

  private deeper<T>(fn: () => T): T {
    if (++this.depth > MAX_DEPTH) this.fail('Expression exceeds maximum complexity');
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  script(): Stmt[] {
    const body = this.statements('eof');
    if (this.tok.kind !== 'eof') this.fail(`Unexpected '${this.show(this.tok)}'`);
    return body;
  }

  /** Statements up to `end` (`}` or the end of the script). */
  private statements(end: '}' | 'eof'): Stmt[] {
    const out: Stmt[] = [];
    while (!this.atEnd(end)) {
      if (this.atEof()) this.fail("Expecting '}' to close the block");
      if (this.eat(';')) continue;
      const s = this.statement();
      if (s.t === 'fn') {
        if (end !== 'eof' || this.depth > 0) this.fail('Functions can only be defined at the top level of the script', this.tokens[this.i - 1]!);
        if (this.functions.has(`${s.name}/${s.params.length}`)) this.fail(`Function '${s.name}' with ${s.params.length} parameters is already defined`);
        this.functions.set(`${s.name}/${s.params.length}`, s);
        continue;
      }
      out.push(s);
      // Expressions need a `;` unless they end a block or are block-like themselves.
      if (s.t === 'expr' && !s.terminated) {
        if (this.eat(';')) s.terminated = true;
        else if (!this.atEnd(end) && !blockLike(s.e)) this.fail(`Expecting ';' to terminate this statement${this.found()}`);
      } else if (s.t === 'let' || s.t === 'break' || s.t === 'continue' || s.t === 'return' || s.t === 'throw' || s.t === 'do') {
        if (!this.eat(';') && !this.atEnd(end)) this.fail(`Expecting ';' to terminate this statement${this.found()}`);
      }
    }
    return out;
  }

  private block(): Stmt[] {
    this.expect('{', 'to start a block');
    const body = this.deeper(() => this.statements('}'));
    this.expect('}', 'to end the block');
    return body;
  }

  private statement(): Stmt {
    const t = this.tok;
    const pos = { line: t.line, column: t.column };
    this.refuse(t);
    if (t.kind === 'ident') {
      switch (t.value) {
        case 'let':
        case 'const': {
          this.i++;
          const name = this.ident('a variable name');
          const e = this.eat('=') ? this.expression() : null;
          if (t.value === 'const' && e === null) this.fail(`Expecting '=' after constant '${name}'`);
          return { ...pos, t: 'let', name, e, constant: t.value === 'const' };
        }
        case 'while': {
          this.i++;
          const cond = this.expression();
          return { ...pos, t: 'while', cond, body: this.block() };
        }
        case 'loop':
          this.i++;
          return { ...pos, t: 'loop', body: this.block() };
        case 'do': {
          this.i++;
          const body = this.block();
          const until = this.is('until');
          if (!this.eat('while') && !this.eat('until')) this.fail("Expecting 'while' or 'until' after a 'do' block");
          return { ...pos, t: 'do', body, cond: this.expression(), until };
        }
        case 'for': {
          this.i++;
          let item: string;
          let index: string | null = null;
          if (this.eat('(')) {
            item = this.ident('a loop variable');
            this.expect(',', 'between the loop variables');
            index = this.ident('a counter variable');
            this.expect(')', 'after the loop variables');
          } else item = this.ident('a loop variable');
          this.expect('in', "after the loop variable ('for x in …')");
          const iter = this.expression();
          return { ...pos, t: 'for', item, index, iter, body: this.block() };
        }
        case 'break':
        case 'return':
        case 'throw': {
          this.i++;
          const ends = this.is(';') || this.is('}') || this.tok.kind === 'eof';
          const e = ends ? null : this.expression();
          return { ...pos, t: t.value, e };
        }
        case 'continue':
          this.i++;
          return { ...pos, t: 'continue' };
        case 'try': {
          this.i++;
          const body = this.block();
          this.expect('catch', "after a 'try' block");
          let name: string | null = null;
          if (this.eat('(')) {
            name = this.ident('a name for the error');
            this.expect(')', 'after the error name');
          }
          return { ...pos, t: 'try', body, name, handler: this.block() };
        }
        case 'fn': {
          this.i++;
          const name = this.ident('a function name');
          this.expect('(', 'to start the parameters');
          const params: string[] = [];
          while (!this.is(')')) {
            params.push(this.ident('a parameter name'));
            if (!this.eat(',')) break;
          }
          this.expect(')', 'to end the parameters');
          return { ...pos, t: 'fn', name, params, body: this.block() };
        }
      }
    }
    return { ...pos, t: 'expr', e: this.expression(), terminated: false };
  }

  expression(): Expr {
    return this.deeper(() => this.assignment());
  }

  private assignment(): Expr {
    const left = this.binary(0);
    const t = this.tok;
    if (t.kind === 'punct' && ASSIGN.has(t.value)) {
      if (left.t !== 'var' && left.t !== 'prop' && left.t !== 'idx') this.fail('Only a variable, a property or an indexed item can be assigned to', t);
      this.i++;
      const value = this.assignment();
      return { line: t.line, column: t.column, t: 'assign', op: t.value, target: left, value };
    }
    return left;
  }

  private binaryOp(): string | null {
    const t = this.tok;
    if (t.kind === 'ident' && t.value === 'in') return 'in';
    if (t.kind === 'punct' && t.value === '!' && this.tokens[this.i + 1]?.kind === 'ident' && this.tokens[this.i + 1]!.value === 'in') return '!in';
    if (t.kind === 'punct' && PRECEDENCE.has(t.value)) return t.value;
    return null;
  }

  private binary(min: number): Expr {
    let left = this.unary();
    for (;;) {
      const op = this.binaryOp();
      if (op === null) return left;
      const p = PRECEDENCE.get(op)!;
      if (p < min) return left;
      const t = this.tok;
      this.i += op === '!in' ? 2 : 1;
      // `**` is right-associative; ranges do not chain.
      const right = this.deeper(() => this.binary(op === '**' ? p : p + 1));
      const pos = { line: t.line, column: t.column };
      left = op === '..' || op === '..=' ? { ...pos, t: 'range', from: left, to: right, inclusive: op === '..=' } : { ...pos, t: 'bin', op, l: left, r: right };
    }
  }

  private unary(): Expr {
    const t = this.tok;
    if (t.kind === 'punct' && (t.value === '-' || t.value === '!' || t.value === '+')) {
      this.i++;
      const e = this.deeper(() => this.unary());
      return { line: t.line, column: t.column, t: 'unary', op: t.value, e };
    }
    return this.postfix(this.primary());
  }

  private args(): Expr[] {
    const args: Expr[] = [];
    while (!this.is(')')) {
      args.push(this.expression());
      if (!this.eat(',')) break;
    }
    this.expect(')', 'to end the arguments');
    return args;
  }

  private postfix(e: Expr): Expr {
    for (;;) {
      const t = this.tok;
      const pos = { line: t.line, column: t.column };
      if (this.eat('.') || this.eat('?.')) {
        const safe = t.value === '?.';
        const name = this.tok;
        if (name.kind !== 'ident') this.fail(`Expecting a property or method name after '${t.value}'`);
        this.i++;
        if (this.eat('(')) e = { ...pos, t: 'method', obj: e, name: name.value, args: this.args(), safe };
        else e = { ...pos, t: 'prop', obj: e, name: name.value, safe };
      } else if (this.eat('[') || this.eat('?[')) {
        const safe = t.value === '?[';
        const index = this.expression();
        this.expect(']', 'to end the index');
        e = { ...pos, t: 'idx', obj: e, index, safe };
      } else if (t.kind === 'punct' && t.value === '::') {
        this.fail('modules (`::` paths) are not supported in document edition functions');
      } else return e;
    }
  }

  private primary(): Expr {
    const t = this.tok;
    const pos = { line: t.line, column: t.column };
    switch (t.kind) {
      case 'int':
        this.i++;
        return { ...pos, t: 'lit', v: BigInt(t.value) };
      case 'float':
        this.i++;
        return { ...pos, t: 'lit', v: Number(t.value) };
      case 'string':
      case 'char':
        this.i++;
        return { ...pos, t: 'lit', v: t.value };
      case 'template': {
        this.i++;
        const exprs = t.parts!.exprs.map((x) => {
          const sub = new Parser(tokenize(x.src).map((k) => (k.line === 1 ? { ...k, line: x.line, column: k.column + x.column - 1 } : { ...k, line: k.line + x.line - 1 })));
          const e = sub.expression();
          if (sub.tok.kind !== 'eof') sub.fail(`Unexpected '${sub.show(sub.tok)}' in a string interpolation`);
          return e;
        });
        return { ...pos, t: 'tpl', parts: t.parts!.text, exprs };
      }
      case 'eof':
        return this.fail('Script is incomplete: an expression is missing');
      case 'ident': {
        this.refuse(t);
        if (t.value === 'true' || t.value === 'false') {
          this.i++;
          return { ...pos, t: 'lit', v: t.value === 'true' };
        }
        if (t.value === 'if') {
          this.i++;
          const cond = this.expression();
          const then = this.block();
          let otherwise: Stmt[] | null = null;
          if (this.eat('else')) {
            if (this.is('if')) {
              const nested = this.primary();
              otherwise = [{ line: nested.line, column: nested.column, t: 'expr', e: nested, terminated: false }];
            } else otherwise = this.block();
          }
          return { ...pos, t: 'if', cond, then, else: otherwise };
        }
        if (KEYWORDS.has(t.value)) this.fail(`Unexpected keyword '${t.value}'`);
        this.i++;
        if (this.eat('(')) return { ...pos, t: 'call', name: t.value, args: this.args() };
        return { ...pos, t: 'var', name: t.value };
      }
      case 'punct':
        break;
    }
    if (this.eat('(')) {
      if (this.eat(')')) return { ...pos, t: 'lit', v: null };
      const e = this.expression();
      this.expect(')', 'to close the parenthesis');
      return e;
    }
    if (this.eat('[')) {
      const items: Expr[] = [];
      while (!this.is(']')) {
        items.push(this.expression());
        if (!this.eat(',')) break;
      }
      this.expect(']', 'to end the array');
      return { ...pos, t: 'arr', items };
    }
    if (this.eat('#{')) {
      const entries: [string, Expr][] = [];
      while (!this.is('}')) {
        const k = this.tok;
        if (k.kind !== 'ident' && k.kind !== 'string') this.fail('Expecting a property name in the object map');
        this.i++;
        if (entries.some(([name]) => name === k.value)) this.fail(`Duplicated property '${k.value}' in the object map`, k);
        this.expect(':', 'after the property name');
        entries.push([k.value, this.expression()]);
        if (!this.eat(',')) break;
      }
      this.expect('}', 'to end the object map');
      return { ...pos, t: 'map', entries };
    }
    if (this.is('{')) return { ...pos, t: 'block', body: this.block() };
    if (this.is('|') || this.is('||')) {
      const params: string[] = [];
      if (!this.eat('||')) {
        this.i++;
        while (!this.is('|')) {
          params.push(this.ident('a closure parameter'));
          if (!this.eat(',')) break;
        }
        this.expect('|', 'to end the closure parameters');
      }
      if (this.is('{')) return { ...pos, t: 'closure', params, body: this.block() };
      const e = this.expression();
      return { ...pos, t: 'closure', params, body: [{ line: e.line, column: e.column, t: 'expr', e, terminated: false }] };
    }
    return this.fail(`Unexpected '${this.show(t)}'`);
  }
}

function blockLike(e: Expr): boolean {
  return e.t === 'if' || e.t === 'block';
}

/** Parses a whole script; throws a `RhaiError` saying what is wrong and where. */
export function parseScript(src: string): Script {
  const p = new Parser(tokenize(src));
  const body = p.script();
  return { body, functions: p.functions };
}
