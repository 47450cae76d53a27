// Runs a parsed Rhai script against a scope, with the limits that keep an untrusted function
// in its box: a number of operations (work on long strings, arrays and maps counts in
// proportion to their size), the size of strings, arrays and maps, the depth of calls, and a
// wall-clock deadline. Every limit but the deadline depends only on the script and its input.

import { RhaiError } from './lexer.js';
import type { Expr, Script, Stmt } from './parser.js';
import { callBuiltin, type Runtime } from './builtins.js';
import { display, equals, I64_MAX, I64_MIN, isClosure, isMap, isRange, typeName, type Closure, type RMap, type Value } from './values.js';

export interface Limits {
  maxOperations: number;
  maxStringSize: number;
  maxArraySize: number;
  maxMapSize: number;
  maxCallLevels: number;
  /** Wall-clock time for one run, in milliseconds. */
  timeoutMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxOperations: 1_000_000,
  maxStringSize: 1024 * 1024,
  maxArraySize: 10_000,
  maxMapSize: 10_000,
  maxCallLevels: 64,
  timeoutMs: 1_000,
};

class Signal {
  constructor(
    readonly kind: 'break' | 'continue' | 'return',
    readonly value: Value = null,
  ) {}
}

/** An error thrown by the script (`throw`) or by the runtime, catchable with `try`/`catch`. */
class Thrown extends RhaiError {
  constructor(
    message: string,
    readonly value: Value,
    line: number,
    column: number,
  ) {
    super(message, line, column);
  }
}

/** A limit was hit: not catchable by the script. */
class LimitHit extends RhaiError {}

interface Binding {
  value: Value;
  constant: boolean;
}

class Env {
  private readonly vars = new Map<string, Binding>();
  constructor(readonly parent: Env | null) {}

  lookup(name: string): Binding | undefined {
    for (let e: Env | null = this; e; e = e.parent) {
      const b = e.vars.get(name);
      if (b) return b;
    }
    return undefined;
  }

  define(name: string, value: Value, constant = false): void {
    this.vars.set(name, { value, constant });
  }

  get size(): number {
    let n = 0;
    for (let e: Env | null = this; e; e = e.parent) n += e.vars.size;
    return n;
  }
}

export class Interpreter implements Runtime {
  private ops = 0;
  private depth = 0;
  private deadline = 0;
  private at: { line: number; column: number } = { line: 0, column: 0 };

  constructor(
    private readonly script: Script,
    readonly limits: Limits = DEFAULT_LIMITS,
  ) {}

  /** Runs the script with `vars` in scope; returns the variables as the script left them. */
  run(vars: Record<string, Value>, constants: Record<string, Value> = {}): Record<string, Value> {
    this.ops = 0;
    this.depth = 0;
    this.deadline = Date.now() + this.limits.timeoutMs;
    const env = new Env(null);
    for (const [k, v] of Object.entries(constants)) env.define(k, v, true);
    for (const [k, v] of Object.entries(vars)) env.define(k, v);
    try {
      this.block(this.script.body, env, false);
    } catch (e) {
      if (e instanceof Signal) {
        if (e.kind !== 'return') this.fail(`'${e.kind}' outside of a loop`);
      } else throw e;
    }
    const out: Record<string, Value> = {};
    for (const k of Object.keys(vars)) out[k] = env.lookup(k)!.value;
    return out;
  }

  // ---- limits ------------------------------------------------------------------------------

  tick(n = 1): void {
    this.ops += n;
    if (this.ops > this.limits.maxOperations) throw new LimitHit('Too many operations', this.at.line, this.at.column);
    if ((this.ops & 0x3ff) < n && Date.now() > this.deadline) {
      throw new LimitHit(`Script timed out: it ran for more than ${this.limits.timeoutMs} ms`, this.at.line, this.at.column);
    }
  }

  /** Checks a size against its limit; a new string is charged for its length (it was copied). */
  sized<T extends Value>(v: T): T {
    if (typeof v === 'string') {
      if (v.length > this.limits.maxStringSize) throw new LimitHit('Length of string too large', this.at.line, this.at.column);
      this.tick(v.length >> 10);
    } else if (Array.isArray(v)) {
      if (v.length > this.limits.maxArraySize) throw new LimitHit('Size of array too large', this.at.line, this.at.column);
    } else if (isMap(v)) {
      if (v.size > this.limits.maxMapSize) throw new LimitHit('Size of object map too large', this.at.line, this.at.column);
    }
    return v;
  }

  /** A copy of `v` to store elsewhere (Rhai arrays and maps are values), paid for by its size. */
  take(v: Value): Value {
    if (Array.isArray(v)) {
      this.tick(v.length >> 3);
      return v.map((x) => this.take(x));
    }
    if (isMap(v)) {
      this.tick(v.size >> 3);
      const m: RMap = new Map();
      for (const [k, x] of v) m.set(k, this.take(x));
      return m;
    }
    return v;
  }

  fail(message: string): never {
    throw new Thrown(message, message, this.at.line, this.at.column);
  }

  // ---- statements --------------------------------------------------------------------------

  /** Runs statements; the value of the last unterminated expression is the block's value. */
  private block(body: readonly Stmt[], parent: Env, scoped = true): Value {
    const env = scoped ? new Env(parent) : parent;
    let last: Value = null;
    for (const s of body) {
      last = null;
      this.at = s;
      this.tick();
      switch (s.t) {
        case 'let': {
          if (env.size >= 1000) this.fail('Too many variables defined');
          env.define(s.name, s.e ? this.take(this.expr(s.e, env)) : null, s.constant);
          break;
        }
        case 'expr': {
          const v = this.expr(s.e, env);
          if (!s.terminated) last = v;
          break;
        }
        case 'while':
          while (this.truth(this.expr(s.cond, env), 'while')) if (this.loopBody(s.body, env)) break;
          break;
        case 'loop':
          for (;;) if (this.loopBody(s.body, env)) break;
          break;
        case 'do':
          do {
            if (this.loopBody(s.body, env)) break;
          } while (this.truth(this.expr(s.cond, env), s.until ? 'until' : 'while') !== s.until);
          break;
        case 'for':
          this.forLoop(s, env);
          break;
        case 'break':
          throw new Signal('break', s.e ? this.expr(s.e, env) : null);
        case 'continue':
          throw new Signal('continue');
        case 'return':
          throw new Signal('return', s.e ? this.expr(s.e, env) : null);
        case 'throw': {
          const v = s.e ? this.expr(s.e, env) : null;
          throw new Thrown(`Runtime error: ${display(v)}`, v, s.line, s.column);
        }
        case 'try':
          try {
            this.block(s.body, env);
          } catch (e) {
            if (!(e instanceof Thrown)) throw e;
            const handler = new Env(env);
            if (s.name) handler.define(s.name, e.value);
            this.block(s.handler, handler, false);
          }
          break;
        case 'fn':
          break;
      }
    }
    return last;
  }

  /** True when the loop must stop (`break`). */
  private loopBody(body: readonly Stmt[], env: Env): boolean {
    // An empty body still costs: `loop {}` must hit the limit.
    this.tick();
    try {
      this.block(body, env);
    } catch (e) {
      if (!(e instanceof Signal) || e.kind === 'return') throw e;
      return e.kind === 'break';
    }
    return false;
  }

  private forLoop(s: Extract<Stmt, { t: 'for' }>, env: Env): void {
    const iter = this.expr(s.iter, env);
    let items: Iterable<Value>;
    if (Array.isArray(iter)) items = iter.slice();
    else if (isRange(iter)) {
      const [from, to] = iter.range;
      items = (function* () {
        for (let i = from; i < to; i++) yield i;
      })();
    } else if (typeof iter === 'string') items = [...iter];
    else if (isMap(iter)) this.fail("Maps cannot be iterated on directly: use 'keys()' or 'values()'");
    else this.fail(`Cannot iterate over a value of type '${typeName(iter)}'`);
    let n = 0n;
    for (const item of items!) {
      const scope = new Env(env);
      scope.define(s.item, this.take(item));
      if (s.index) scope.define(s.index, n);
      n++;
      if (this.loopBody(s.body, scope)) break;
    }
  }

  private truth(v: Value, what: string): boolean {
    if (typeof v !== 'boolean') this.fail(`Expecting a boolean for the '${what}' condition, found '${typeName(v)}'`);
    return v;
  }

  // ---- expressions -------------------------------------------------------------------------

  private expr(e: Expr, env: Env): Value {
    this.at = e;
    this.tick();
    switch (e.t) {
      case 'lit':
        return e.v as Value;
      case 'tpl': {
        let out = e.parts[0]!;
        e.exprs.forEach((x, i) => {
          out += display(this.expr(x, env)) + e.parts[i + 1]!;
        });
        return this.sized(out);
      }
      case 'var': {
        const b = env.lookup(e.name);
        if (!b) this.fail(`Variable not found: ${e.name}`);
        return b!.value;
      }
      case 'arr':
        return this.sized(e.items.map((x) => this.take(this.expr(x, env))));
      case 'map': {
        const m: RMap = new Map();
        for (const [k, x] of e.entries) m.set(k, this.take(this.expr(x, env)));
        return this.sized(m);
      }
      case 'prop': {
        const obj = this.expr(e.obj, env);
        if (obj === null && e.safe) return null;
        return this.property(obj, e.name);
      }
      case 'idx': {
        const obj = this.expr(e.obj, env);
        if (obj === null && e.safe) return null;
        return this.index(obj, this.expr(e.index, env));
      }
      case 'call':
        return this.callFunction(e.name, e.args.map((a) => this.take(this.expr(a, env))), env);
      case 'method': {
        const self = this.expr(e.obj, env);
        if (self === null && e.safe) return null;
        const args = e.args.map((a) => this.take(this.expr(a, env)));
        this.at = e;
        const r = callBuiltin(this, e.name, self, args);
        // Strings are values: a method that changes one in place writes it back where it came from.
        if (r.self !== undefined) this.assignTo(e.obj, r.self, env);
        return r.ret;
      }
      case 'unary': {
        const v = this.expr(e.e, env);
        if (e.op === '!') {
          if (typeof v !== 'boolean') this.fail(`Function not found: ! (${typeName(v)})`);
          return !v;
        }
        if (typeof v === 'bigint') return e.op === '-' ? this.int(-v, '-') : v;
        if (typeof v === 'number') return e.op === '-' ? -v : v;
        return this.fail(`Function not found: ${e.op} (${typeName(v)})`);
      }
      case 'bin':
        return this.binary(e, env);
      case 'assign': {
        let v = this.take(this.expr(e.value, env));
        if (e.op !== '=') {
          const current = this.expr(e.target, env);
          this.at = e;
          v = this.operate(e.op.slice(0, -1), current, v);
        }
        this.at = e;
        this.assignTo(e.target, v, env);
        return null;
      }
      case 'range': {
        const from = this.expr(e.from, env);
        const to = this.expr(e.to, env);
        if (typeof from !== 'bigint' || typeof to !== 'bigint') this.fail(`Function not found: ${e.inclusive ? '..=' : '..'} (${typeName(from)}, ${typeName(to)})`);
        return { range: [from as bigint, (to as bigint) + (e.inclusive ? 1n : 0n)] };
      }
      case 'closure':
        return { closure: e, env } satisfies Closure;
      case 'if': {
        if (this.truth(this.expr(e.cond, env), 'if')) return this.block(e.then, env);
        return e.else ? this.block(e.else, env) : null;
      }
      case 'block':
        return this.block(e.body, env);
    }
  }

  property(obj: Value, name: string): Value {
    if (isMap(obj)) return obj.get(name) ?? null;
    if (name === 'len' && typeof obj === 'string') {
      this.tick(obj.length >> 10);
      return BigInt([...obj].length);
    }
    if (name === 'len' && Array.isArray(obj)) return BigInt(obj.length);
    if (name === 'is_empty' && (typeof obj === 'string' || Array.isArray(obj))) return obj.length === 0;
    return this.fail(`Unknown property '${name}' - a getter is not registered for type '${typeName(obj)}'`);
  }

  private position(len: number, i: Value, kind: string): number {
    if (typeof i !== 'bigint') this.fail(`${kind} index must be an integer, found '${typeName(i)}'`);
    const n = Number(i);
    const at = n < 0 ? len + n : n;
    if (at < 0 || at >= len) this.fail(`${kind} index ${n} out of bounds: 0 to ${len - 1}`);
    return at;
  }

  index(obj: Value, i: Value): Value {
    if (Array.isArray(obj)) return obj[this.position(obj.length, i, 'Array')]!;
    if (isMap(obj)) {
      if (typeof i !== 'string') this.fail(`Object map key must be a string, found '${typeName(i)}'`);
      return obj.get(i as string) ?? null;
    }
    if (typeof obj === 'string') {
      const chars = [...obj];
      return chars[this.position(chars.length, i, 'String')]!;
    }
    return this.fail(`Indexing is not supported on type '${typeName(obj)}'`);
  }

  /** Stores `v` where `target` (a variable, property or indexed item) points. */
  private assignTo(target: Expr, v: Value, env: Env): void {
    switch (target.t) {
      case 'var': {
        const b = env.lookup(target.name);
        if (!b) this.fail(`Variable not found: ${target.name}`);
        if (b!.constant) this.fail(`Cannot modify constant ${target.name}`);
        b!.value = v;
        return;
      }
      case 'prop': {
        const obj = this.expr(target.obj, env);
        if (!isMap(obj)) this.fail(`Cannot set property '${target.name}' of a value of type '${typeName(obj)}'`);
        (obj as RMap).set(target.name, v);
        this.sized(obj);
        return;
      }
      case 'idx': {
        const obj = this.expr(target.obj, env);
        const i = this.expr(target.index, env);
        if (Array.isArray(obj)) obj[this.position(obj.length, i, 'Array')] = v;
        else if (isMap(obj)) {
          if (typeof i !== 'string') this.fail(`Object map key must be a string, found '${typeName(i)}'`);
          obj.set(i as string, v);
          this.sized(obj);
        } else if (typeof obj === 'string') {
          if (typeof v !== 'string' || [...v].length !== 1) this.fail('Only a character can be stored in a string');
          const chars = [...obj];
          chars[this.position(chars.length, i, 'String')] = v as string;
          this.assignTo(target.obj, chars.join(''), env);
        } else this.fail(`Indexing is not supported on type '${typeName(obj)}'`);
        return;
      }
      default:
        this.fail('Only a variable, a property or an indexed item can be assigned to');
    }
  }

  private binary(e: Extract<Expr, { t: 'bin' }>, env: Env): Value {
    const l = this.expr(e.l, env);
    if (e.op === '&&' || e.op === '||') {
      if (typeof l !== 'boolean') this.fail(`Function not found: ${e.op} (${typeName(l)}, ...)`);
      if (e.op === '&&' ? !l : l) return l;
      const r = this.expr(e.r, env);
      if (typeof r !== 'boolean') this.fail(`Function not found: ${e.op} (bool, ${typeName(r)})`);
      return r;
    }
    if (e.op === '??') return l !== null ? l : this.expr(e.r, env);
    const r = this.expr(e.r, env);
    this.at = e;
    if (e.op === 'in' || e.op === '!in') return this.contains(r, l) !== (e.op === '!in');
    return this.operate(e.op, l, r);
  }

  private contains(container: Value, item: Value): boolean {
    if (typeof container === 'string') {
      if (typeof item !== 'string') this.fail(`Function not found: in (${typeName(item)}, string)`);
      return container.includes(item as string);
    }
    if (Array.isArray(container)) return container.some((x) => equals(x, item));
    if (isMap(container)) {
      if (typeof item !== 'string') this.fail(`Function not found: in (${typeName(item)}, map)`);
      return container.has(item as string);
    }
    if (isRange(container) && typeof item === 'bigint') return item >= container.range[0] && item < container.range[1];
    return this.fail(`Function not found: in (${typeName(item)}, ${typeName(container)})`);
  }

  int(v: bigint, op: string): bigint {
    if (v < I64_MIN || v > I64_MAX) this.fail(`Arithmetic overflow: ${op}`);
    return v;
  }

  /** Rhai's binary operators on two values (also used by compound assignments). */
  operate(op: string, l: Value, r: Value): Value {
    const notFound = (): never => this.fail(`Function not found: ${op} (${typeName(l)}, ${typeName(r)})`);
    if (op === '==') return equals(l, r);
    if (op === '!=') return !equals(l, r);
    if (typeof l === 'bigint' && typeof r === 'bigint') {
      switch (op) {
        case '+':
          return this.int(l + r, `${l} + ${r}`);
        case '-':
          return this.int(l - r, `${l} - ${r}`);
        case '*':
          return this.int(l * r, `${l} * ${r}`);
        case '/':
          if (r === 0n) this.fail(`Division by zero: ${l} / ${r}`);
          return this.int(l / r, `${l} / ${r}`);
        case '%':
          if (r === 0n) this.fail(`Division by zero: ${l} % ${r}`);
          return l % r;
        case '**':
          if (r < 0n) this.fail(`Integer raised to a negative index: ${l} ** ${r}`);
          if (r > 64n && (l > 1n || l < -1n)) this.fail(`Arithmetic overflow: ${l} ** ${r}`);
          return this.int(l ** r, `${l} ** ${r}`);
        case '<<':
        case '>>':
          if (r < 0n || r > 63n) this.fail(`Bit-shift by an invalid number of bits: ${r}`);
          return op === '<<' ? BigInt.asIntN(64, l << r) : l >> r;
        case '&':
          return l & r;
        case '|':
          return l | r;
        case '^':
          return l ^ r;
      }
    }
    const numeric = (v: Value) => typeof v === 'bigint' || typeof v === 'number';
    if (numeric(l) && numeric(r)) {
      const a = Number(l);
      const b = Number(r);
      switch (op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return a / b;
        case '%':
          return a % b;
        case '**':
          return a ** b;
        case '<':
          return a < b;
        case '>':
          return a > b;
        case '<=':
          return a <= b;
        case '>=':
          return a >= b;
      }
      return notFound();
    }
    if (typeof l === 'boolean' && typeof r === 'boolean') {
      if (op === '&') return l && r;
      if (op === '|') return l || r;
      if (op === '^') return l !== r;
      return notFound();
    }
    if (typeof l === 'string' && typeof r === 'string') {
      switch (op) {
        case '+':
          this.tick((l.length + r.length) >> 10);
          return this.sized(l + r);
        case '-':
          return this.sized(l.split(r).join(''));
        case '<':
          return l < r;
        case '>':
          return l > r;
        case '<=':
          return l <= r;
        case '>=':
          return l >= r;
      }
      return notFound();
    }
    if (op === '+' && (typeof l === 'string' || typeof r === 'string')) {
      const s = (typeof l === 'string' ? l : display(l)) + (typeof r === 'string' ? r : display(r));
      return this.sized(s);
    }
    if (Array.isArray(l) && op === '+') {
      // `array + array` concatenates; `array += item` appends the item.
      return this.sized(Array.isArray(r) ? [...l, ...r] : [...l, r]);
    }
    if (isMap(l) && isMap(r) && op === '+') {
      const m: RMap = new Map(l);
      for (const [k, v] of r) m.set(k, v);
      return this.sized(m);
    }
    return notFound();
  }

  // ---- calls -------------------------------------------------------------------------------

  private callFunction(name: string, args: Value[], env: Env): Value {
    const fn = this.script.functions.get(`${name}/${args.length}`);
    if (fn) {
      // Script functions see their parameters only, not the caller's variables.
      const scope = new Env(null);
      fn.params.forEach((p, i) => scope.define(p, args[i]!));
      return this.invoke(() => this.block(fn.body, scope, false));
    }
    // A variable holding a closure can be called like a function.
    const v = env.lookup(name)?.value;
    if (v !== undefined && isClosure(v)) return this.callClosure(v, args);
    if (args.length === 0) return callBuiltin(this, name, undefined, []).ret;
    return callBuiltin(this, name, args[0]!, args.slice(1)).ret;
  }

  private invoke(run: () => Value): Value {
    if (++this.depth > this.limits.maxCallLevels) throw new LimitHit('Stack overflow: too many levels of function calls', this.at.line, this.at.column);
    try {
      return run();
    } catch (e) {
      if (e instanceof Signal && e.kind === 'return') return e.value;
      if (e instanceof Signal) this.fail(`'${e.kind}' outside of a loop`);
      throw e;
    } finally {
      this.depth--;
    }
  }

  callClosure(c: Value, args: Value[]): Value {
    if (!isClosure(c)) this.fail(`Expecting a closure, found '${typeName(c)}'`);
    const { closure, env } = c as Closure;
    if (closure.params.length !== args.length) this.fail(`Function not found: closure with ${args.length} parameters (it takes ${closure.params.length})`);
    const scope = new Env(env as Env);
    closure.params.forEach((p, i) => scope.define(p, args[i]!));
    return this.invoke(() => this.block(closure.body, scope, false));
  }
}

export { RhaiError };
