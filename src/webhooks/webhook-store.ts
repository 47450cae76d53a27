import { ApiError } from '../errors/api-error.js';
import { hideSecret } from '../engine/settings/embedder-fields.js';
import { KeySpace } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';

/**
 * Webhooks: URLs notified with the tasks of every finished batch. Node-wide state changed
 * through the replicated log, so every node holds the same list and any can deliver once it
 * leads. The webhook of `--task-webhook-url` is not stored: it is this node's own, shown with
 * the nil uuid and not editable, as the reference shows it.
 */

export interface Webhook {
  url: string;
  headers: Record<string, string>;
}

export type WebhookOp =
  | { op: 'create'; uuid: string; url: string | null; headers: Record<string, string> }
  /** `url: null` removes the URL (refused); `headers: null` clears them; a header set to null is removed. */
  | { op: 'update'; uuid: string; url?: string | null; headers?: Record<string, string | null> | null }
  | { op: 'delete'; uuid: string };

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
export const MAX_WEBHOOKS = 20;
export const MAX_HEADERS = 200;

const WEBHOOKS = new KeySpace('wh');

export function webhookNotFound(uuid: string): ApiError {
  return new ApiError('webhook_not_found', `Webhook \`${uuid}\` not found.`);
}

export function immutableWebhook(uuid: string): ApiError {
  return new ApiError('immutable_webhook', `Webhook \`${uuid}\` is immutable. The webhook defined from the command line cannot be modified using the API.`);
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII, spaces and tabs, and bytes past ASCII (obs-text); no control characters.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Checks a webhook as it would be stored: the reference's `check_changed`. */
export function checkWebhook(uuid: string, w: { url: string | null; headers: Record<string, string> }): asserts w is Webhook {
  if (w.url === null || w.url === '') throw new ApiError('invalid_webhook_url', `The URL for the webhook \`${uuid}\` is missing.`);
  if (Object.keys(w.headers).length > MAX_HEADERS) {
    throw new ApiError(
      'invalid_webhook_headers',
      `Too many headers for the webhook \`${uuid}\`. Please limit the number of headers to ${MAX_HEADERS}. Hint: To remove an already defined header set its value to \`null\``,
    );
  }
  for (const [name, value] of Object.entries(w.headers)) {
    if (!TOKEN.test(name)) throw new ApiError('invalid_webhook_headers', `Invalid header name \`${name}\`: invalid HTTP header name`);
    if (!FIELD_VALUE.test(value)) throw new ApiError('invalid_webhook_headers', `Invalid header value \`${name}\`: failed to parse header value`);
  }
  let url: URL;
  try {
    url = new URL(w.url);
  } catch {
    const why = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(w.url) ? 'invalid URL' : 'relative URL without a base';
    throw new ApiError('invalid_webhook_url', `Invalid URL \`${w.url}\`: ${why}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiError('invalid_webhook_url', `Invalid URL \`${w.url}\`: only \`http\` and \`https\` URLs can be notified`);
  }
}

/** A webhook as the API shows it: `Authorization` values masked, as the reference masks secrets. */
export function webhookView(uuid: string, w: Webhook): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(w.headers)) {
    if (name.toLowerCase() !== 'authorization') headers[name] = value;
    else headers[name] = value.startsWith('Bearer ') ? 'Bearer ' + hideSecret(value.slice(7)) : hideSecret(value);
  }
  return { uuid, isEditable: uuid !== NIL_UUID, url: w.url, headers };
}

export class WebhookStore implements ConfigHandler {
  static readonly COMMAND = 'webhooks';
  private hooks = new Map<string, Webhook>();

  constructor(private readonly cli: Webhook | null = null) {}

  /** Every webhook, the command line's first, then by uuid (the reference's order). */
  all(): [string, Webhook][] {
    const stored = [...this.hooks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return this.cli ? [[NIL_UUID, this.cli], ...stored] : stored;
  }

  get(uuid: string): Webhook | undefined {
    return uuid === NIL_UUID ? (this.cli ?? undefined) : this.hooks.get(uuid);
  }

  apply(raw: unknown, _at: number, wb: WriteBatch): unknown {
    const op = raw as WebhookOp;
    if (op.uuid === NIL_UUID) throw immutableWebhook(op.uuid);
    switch (op.op) {
      case 'create': {
        if (this.hooks.size >= MAX_WEBHOOKS) {
          throw new ApiError(
            'invalid_webhooks',
            `Defining too many webhooks would crush the server. Please limit the number of webhooks to ${MAX_WEBHOOKS}. You may use a third-party proxy server to dispatch events to more than ${MAX_WEBHOOKS} endpoints.`,
          );
        }
        const w = { url: op.url, headers: { ...op.headers } };
        checkWebhook(op.uuid, w);
        return this.put(wb, op.uuid, w);
      }
      case 'update': {
        const old = this.hooks.get(op.uuid);
        if (!old) throw webhookNotFound(op.uuid);
        const url = op.url === undefined ? old.url : op.url;
        let headers = { ...old.headers };
        if (op.headers === null) headers = {};
        else if (op.headers) {
          for (const [name, value] of Object.entries(op.headers)) {
            if (value === null) delete headers[name];
            else headers[name] = value;
          }
        }
        const w = { url, headers };
        checkWebhook(op.uuid, w);
        return this.put(wb, op.uuid, w);
      }
      case 'delete': {
        if (!this.hooks.has(op.uuid)) throw webhookNotFound(op.uuid);
        this.hooks.delete(op.uuid);
        wb.del(WEBHOOKS.key(op.uuid));
        return null;
      }
    }
  }

  private put(wb: WriteBatch, uuid: string, w: Webhook): Record<string, unknown> {
    this.hooks.set(uuid, w);
    wb.put(WEBHOOKS.key(uuid), JSON.stringify(w));
    return webhookView(uuid, w);
  }

  async load(reader: KvReader): Promise<void> {
    const hooks = new Map<string, Webhook>();
    for await (const { key, value } of reader.scan({ prefix: WEBHOOKS.prefix })) {
      hooks.set(WEBHOOKS.strip(key).toString(), JSON.parse(value.toString()) as Webhook);
    }
    this.hooks = hooks;
  }
}
