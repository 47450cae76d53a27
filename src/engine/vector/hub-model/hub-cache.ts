// Where a `hubModel` embedder's model comes from: the model hub, as the reference does it.
// A model id (and revision, `main` by default) is fetched once from
// `{endpoint}/{model}/resolve/{revision}/{file}` into a cache laid out as the hub's own
// clients lay theirs (`models--org--name/snapshots/{commit}/…`, `refs/{revision}`), then
// used from there without the network. A download goes to a scratch directory that is
// renamed into place only once every file arrived whole, so a failed or interrupted one
// leaves nothing behind that could pass for a model.

import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EmbedError } from '../embed-error.js';
import { MODEL_FILES, POOLING_FILE, pytorchOnly, readConfig } from './model-files.js';
import { checkSafetensorsFile } from './safetensors.js';

export interface HubSettings {
  /** The download cache. */
  dir: string;
  /** The hub's address (or an offline mirror's), without a trailing slash. */
  endpoint: string;
  /** Bearer token for gated or private models. */
  token?: string;
  /** No byte for this long and a download is abandoned (60 s unless given). */
  stallMs?: number;
}

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/;
const REVISION = /^[A-Za-z0-9][A-Za-z0-9._\/-]*$/;
const COMMIT = /^[0-9a-f]{40}$/;

const complete = (dir: string) => MODEL_FILES.every((f) => existsSync(join(dir, f)));

/** A model directory given as a path, or placed by hand under the cache as `{model}[/{revision}]`. */
function localDir(model: string, revision: string | undefined, hub: HubSettings): string | null {
  const base = isAbsolute(model) ? model : join(hub.dir, model);
  if (revision && complete(join(base, revision))) return join(base, revision);
  if (complete(base)) return base;
  if (isAbsolute(model)) {
    throw new EmbedError('user', `model \`${model}\` is not available locally: \`${model}\` lacks one of ${MODEL_FILES.map((f) => `\`${f}\``).join(', ')}`);
  }
  return null;
}

const repoDir = (model: string, hub: HubSettings) => join(hub.dir, `models--${model.replace('/', '--')}`);

/** The cached snapshot of that model and revision, if there is one. */
function cached(model: string, revision: string, hub: HubSettings): string | null {
  const repo = repoDir(model, hub);
  const ref = join(repo, 'refs', revision);
  const commit = COMMIT.test(revision) ? revision : existsSync(ref) ? readFileSync(ref, 'utf8').trim() : null;
  if (!commit) return null;
  const dir = join(repo, 'snapshots', commit);
  return complete(dir) ? dir : null;
}

const inFlight = new Map<string, Promise<string>>();

/**
 * The directory of the model's files, downloaded first if the cache lacks them. Concurrent
 * callers for the same model share one download.
 */
export async function locateModel(model: string, revision: string | undefined, hub: HubSettings): Promise<string> {
  const local = localDir(model, revision, hub);
  if (local) return local;
  if (!ID.test(model) || model.includes('..')) {
    throw new EmbedError('user', `\`${model}\` is not a valid model id\n  - Hint: a model id is \`name\` or \`organization/name\`, as on the model hub`);
  }
  const rev = revision ?? 'main';
  if (!REVISION.test(rev) || rev.includes('..')) throw new EmbedError('user', `\`${rev}\` is not a valid revision of model \`${model}\``);
  const hit = cached(model, rev, hub);
  if (hit) return hit;
  const key = JSON.stringify([hub.dir, hub.endpoint, model, rev]);
  let p = inFlight.get(key);
  if (!p) {
    p = download(model, rev, hub).finally(() => inFlight.delete(key));
    inFlight.set(key, p);
  }
  return p;
}

function authorization(hub: HubSettings): Record<string, string> {
  return hub.token ? { authorization: `Bearer ${hub.token}` } : {};
}

function fileUrl(model: string, revision: string, file: string, hub: HubSettings): string {
  return `${hub.endpoint}/${model}/resolve/${encodeURIComponent(revision)}/${file}`;
}

/** Scratch directories this old are left over from a process that died mid-download. */
const STALE_SCRATCH_MS = 24 * 3600_000;

async function download(model: string, revision: string, hub: HubSettings): Promise<string> {
  const repo = repoDir(model, hub);
  await mkdir(repo, { recursive: true });
  for (const entry of await readdir(repo)) {
    const path = join(repo, entry);
    const age = entry.startsWith('.incomplete-') ? await stat(path).then((st) => Date.now() - st.mtimeMs, () => 0) : 0;
    if (age > STALE_SCRATCH_MS) await rm(path, { recursive: true, force: true });
  }
  const scratch = await mkdtemp(join(repo, '.incomplete-'));
  try {
    let commit: string | null = null;
    for (const file of [...MODEL_FILES, POOLING_FILE]) {
      const got = await fetchFile(model, revision, file, join(scratch, file), hub, file === POOLING_FILE);
      commit ??= got;
    }
    readConfig(scratch, model);
    try {
      await checkSafetensorsFile(join(scratch, 'model.safetensors'));
    } catch (e) {
      throw new EmbedError('runtime', `the weights of model \`${model}\` downloaded from ${hub.endpoint} are damaged: ${(e as Error).message}`);
    }
    const name = commit && COMMIT.test(commit) ? commit : revision;
    const snapshot = join(repo, 'snapshots', name);
    await mkdir(dirname(snapshot), { recursive: true });
    // Another download of the same commit may have finished first: keep the one in place.
    if (!complete(snapshot)) {
      await rm(snapshot, { recursive: true, force: true });
      // Another process (a node sharing the cache) may move its copy in at the same moment.
      await rename(scratch, snapshot).catch((e: unknown) => {
        if (!complete(snapshot)) throw e;
      });
    }
    if (!COMMIT.test(revision)) {
      const ref = join(repo, 'refs', revision);
      await mkdir(dirname(ref), { recursive: true });
      await writeFile(`${ref}.tmp`, name);
      await rename(`${ref}.tmp`, ref);
    }
    return snapshot;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Streams one file of the model to `dest`. Returns the commit the hub resolved the
 * revision to, if it said. A missing optional file is skipped.
 */
async function fetchFile(model: string, revision: string, file: string, dest: string, hub: HubSettings, optional: boolean): Promise<string | null> {
  const url = fileUrl(model, revision, file, hub);
  const where = `\`${file}\` of model \`${model}\` (revision \`${revision}\`) from \`${url}\``;
  const abort = new AbortController();
  const stallMs = hub.stallMs ?? 60_000;
  let timer = setTimeout(() => abort.abort(), stallMs);
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), stallMs);
  };
  try {
    let res: Response;
    try {
      res = await fetch(url, { headers: authorization(hub), signal: abort.signal });
    } catch (e) {
      throw new EmbedError('runtime', `could not download ${where}: ${reason(e, abort, stallMs)}\n  - Hint: the model hub must be reachable, or set \`--hub-endpoint\` to a mirror`);
    }
    if (res.status === 404 && optional) {
      await res.body?.cancel();
      return null;
    }
    if (res.status === 404 && file === 'model.safetensors') {
      await res.body?.cancel();
      const alt = await fetch(fileUrl(model, revision, 'pytorch_model.bin', hub), { method: 'HEAD', headers: authorization(hub), signal: abort.signal }).catch(() => null);
      if (alt?.ok) throw pytorchOnly(model);
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      const hint =
        res.status === 401 || res.status === 403
          ? '\n  - Hint: the model may be gated or private: set `HF_TOKEN` to a token that may read it'
          : res.status === 404
            ? '\n  - Hint: check the model id and `revision`'
            : '';
      throw new EmbedError(res.status === 404 || res.status === 401 || res.status === 403 ? 'user' : 'runtime', `could not download ${where}: the hub answered ${res.status} ${res.statusText}${hint}`);
    }
    await mkdir(dirname(dest), { recursive: true });
    const expected = res.headers.get('content-length');
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    body.on('data', touch);
    try {
      await pipeline(body, createWriteStream(dest));
    } catch (e) {
      throw new EmbedError('runtime', `could not download ${where}: ${reason(e, abort, stallMs)}`);
    }
    const size = (await stat(dest)).size;
    if (expected !== null && Number(expected) !== size) {
      throw new EmbedError('runtime', `could not download ${where}: got ${size} bytes of ${expected}`);
    }
    return res.headers.get('x-repo-commit');
  } finally {
    clearTimeout(timer);
  }
}

function reason(e: unknown, abort: AbortController, stallMs: number): string {
  if (abort.signal.aborted) return `no data for ${stallMs / 1000} s`;
  const err = e as Error & { cause?: Error };
  return err.cause?.message ? `${err.message} (${err.cause.message})` : err.message;
}
