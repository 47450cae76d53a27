import { ApiError, toErrorBody } from '../../errors/api-error.js';
import { rfc3339 } from '../../util/time.js';
import type { BatchTask, ProcessedBatch, TaskOutcome } from '../apply/types.js';
import type { Engine } from '../engine.js';
import { applyRuleUpdate, ruleNotFound, type RuleUpdate, type SearchRule } from './rules.js';

/** A `dsrUpdate` (create, change or delete one rule) or `dsrClear` task: processed alone. */
export function processRuleTask(engine: Engine, t: BatchTask, at: number): ProcessedBatch {
  const p = t.params;
  const store = engine.searchRules;
  const done = (outcome: TaskOutcome, write: ProcessedBatch['write'], publish: () => void): ProcessedBatch => ({
    outcomes: new Map([[t.uid, outcome]]),
    write,
    publish,
  });
  const fail = (e: ApiError, details: Record<string, unknown>) =>
    done({ status: 'failed', details: { ...t.details, ...details }, error: toErrorBody(e) }, () => {}, () => {});
  switch (p.op) {
    case 'dsrUpdate': {
      let rule: SearchRule;
      try {
        rule = applyRuleUpdate(p.uid, store.get(p.uid), p.update as RuleUpdate, rfc3339(at));
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return fail(e, { updatedRules: 0 });
      }
      return done(
        { status: 'succeeded', details: { ...t.details, updatedRules: 1 }, error: null },
        (wb) => store.put(wb, rule),
        () => store.publish(new Map([[p.uid, rule]])),
      );
    }
    case 'dsrDelete':
      if (!store.get(p.uid)) return fail(ruleNotFound(p.uid), { deletedRules: 0 });
      return done(
        { status: 'succeeded', details: { ...t.details, deletedRules: 1 }, error: null },
        (wb) => store.del(wb, p.uid),
        () => store.publish(new Map([[p.uid, null]])),
      );
    case 'dsrClear': {
      const n = store.size;
      return done(
        { status: 'succeeded', details: { ...t.details, deletedRules: n }, error: null },
        (wb) => store.clear(wb),
        () => store.publish('clear'),
      );
    }
    default:
      throw new Error(`not a search rule task: ${p.op}`);
  }
}
