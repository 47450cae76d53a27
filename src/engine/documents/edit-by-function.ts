// Editing documents with a function (`POST /indexes/{uid}/documents/edit`): a script in the
// Rhai subset of `../rhai/` runs once per document with `doc` (and `context`) in scope; what
// it leaves in `doc` replaces the document, `()` deletes it. The limits that decide the
// outcome (operations, sizes, call depth) depend only on the script and the documents, so
// every node of a cluster edits the same way; the clock limit is checked on a sample when the
// request arrives (see `previewEdition`), and only backs the others up while the task runs.

import { ApiError } from '../../errors/api-error.js';
import { DEFAULT_LIMITS, Interpreter, type Limits } from '../rhai/interpreter.js';
import { RhaiError } from '../rhai/lexer.js';
import { parseScript, type Script } from '../rhai/parser.js';
import { fromJson, toJson, type Value } from '../rhai/values.js';
import { extractDocumentId, type Doc } from './primary-key.js';
import { stringifyJson } from '../../util/exact-json.js';

/** While the task runs: the deterministic limits, with a clock only as a last resort. */
export const TASK_LIMITS: Limits = { ...DEFAULT_LIMITS, timeoutMs: 30_000 };
/** Documents the function is tried on when the request arrives, against the clock limit. */
export const PREVIEW_DOCUMENTS = 20;

function runtimeError(e: unknown): ApiError {
  const why = e instanceof Error ? e.message : String(e);
  return new ApiError('edit_documents_by_function_error', `Document edition runtime error encountered while running the function: ${why}`);
}

/** Parses the function; a syntax error is the caller's `bad_request`. */
export function compileEdition(source: string): Script {
  try {
    return parseScript(source);
  } catch (e) {
    if (e instanceof RhaiError) throw new ApiError('bad_request', e.message);
    throw e;
  }
}

export type EditOutcome = { kind: 'unchanged' } | { kind: 'deleted' } | { kind: 'edited'; doc: Doc };

/** Runs the function on one document. Throws the task's `edit_documents_by_function_error`. */
export function editDocument(run: Interpreter, doc: Doc, context: Value | undefined, primaryKey: string | null): EditOutcome {
  let out: Value;
  try {
    out = run.run({ doc: fromJson(doc) }, context === undefined ? {} : { context })['doc']!;
  } catch (e) {
    if (e instanceof RhaiError) throw runtimeError(e);
    throw e;
  }
  if (out === null) return { kind: 'deleted' };
  if (!(out instanceof Map)) throw new ApiError('edit_documents_by_function_error', 'Document editions must keep documents as objects');
  let next: Doc;
  try {
    next = toJson(out) as Doc;
  } catch (e) {
    throw runtimeError(e);
  }
  if (stringifyJson(next) === stringifyJson(toJson(fromJson(doc)))) return { kind: 'unchanged' };
  if (primaryKey !== null) {
    let same = false;
    try {
      same = extractDocumentId(next, primaryKey) === extractDocumentId(doc, primaryKey);
    } catch {
      same = false;
    }
    if (!same) throw new ApiError('edit_documents_by_function_error', "Document editions cannot modify a document's primary key");
  }
  return { kind: 'edited', doc: next };
}

/**
 * Tries the function on a few documents with the clock limit, when the request arrives: a
 * function too slow for them is refused before it reaches the log. Other errors are the
 * task's to report, as the reference reports them.
 */
export function previewEdition(script: Script, docs: readonly Doc[], context: Value | undefined, primaryKey: string | null): void {
  const run = new Interpreter(script, DEFAULT_LIMITS);
  for (const doc of docs) {
    try {
      editDocument(run, doc, context, primaryKey);
    } catch (e) {
      if (e instanceof ApiError && /Script timed out/.test(e.message)) {
        throw new ApiError(
          'edit_documents_by_function_error',
          `The function takes more than ${DEFAULT_LIMITS.timeoutMs} ms on a document: make it simpler, or edit fewer documents at once with a \`filter\`.`,
        );
      }
    }
  }
}
