// When V8 starts marking the old generation, for a server process.
//
// By default V8 starts incremental marking once the room left under the old generation's
// limit is less than the new space's capacity (32 MiB at Node 20's defaults). The limit is
// the live size times a factor V8 picks from how fast the program promotes objects: a node
// answering searches promotes a few KB per ms, the factor falls to 1.1-1.3, and with a live
// heap of 50-150 MiB the room is under 32 MiB from the start. Marking then ran back to
// back: on the longdocs dictionary (60 MiB live), a mark-compact every 150-400 ms while
// searches came one after another, each ending in a 3-13 ms pause inside some search
// (--trace-gc, --trace-gc-verbose, --trace-incremental-marking). Starting marking at a
// share of the room instead keeps V8's own factor (up to 4 while an import promotes fast)
// and ends the loop: mark-compacts inside the searches of a pass of 400 three-word queries
// over HTTP went from 10 and 10 to 6 and 7 on the first pass, from 0 and 8 to 1 and 5 on the
// second (two runs each); 80 single-document writes ran 27 instead of 43.

import v8 from 'node:v8';

/** Incremental marking starts (in a task) once this share of the room is used. */
export const MARKING_SOFT_TRIGGER_PERCENT = 90;
/** And at once from this share on. */
export const MARKING_HARD_TRIGGER_PERCENT = 98;

/**
 * Sets the triggers for the whole process. Read by V8 at each check, so setting them after
 * start takes effect at once; the node's entry point calls this, not the engine (tests that
 * open an engine in their own process keep V8's defaults).
 */
export function tuneGarbageCollection(): void {
  v8.setFlagsFromString(`--incremental-marking-soft-trigger=${MARKING_SOFT_TRIGGER_PERCENT}`);
  v8.setFlagsFromString(`--incremental-marking-hard-trigger=${MARKING_HARD_TRIGGER_PERCENT}`);
}
