import { ApiError } from '../errors/api-error.js';
import { hideSecret } from '../engine/settings/embedder-fields.js';
import { KeySpace } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';

/**
 * Chat workspaces (`/chats/{workspace}/settings`): which language model a conversation talks
 * to and the prompts it gets. Node-wide state changed through the replicated log, so any
 * node serves a conversation the same way.
 */

export const CHAT_SOURCES = ['openAi', 'azureOpenAi', 'mistral', 'gemini', 'vLlm'] as const;
export type ChatSource = (typeof CHAT_SOURCES)[number];

export const DEFAULT_SYSTEM_PROMPT =
  'You are a highly capable research assistant with access to powerful search tools. IMPORTANT INSTRUCTIONS:' +
  '1. When answering questions, you MUST make multiple tool calls (at least 2-3) to gather comprehensive information.' +
  '2. Use different search queries for each tool call - vary keywords, rephrase questions, and explore different semantic angles to ensure broad coverage.' +
  '3. Always explicitly announce BEFORE making each tool call by saying: "I\'ll search for [specific information] now."' +
  '4. Combine information from ALL tool calls to provide complete, nuanced answers rather than relying on a single source.' +
  '5. For complex topics, break down your research into multiple targeted queries rather than using a single generic search. ' +
  "Trine doesn't use the colon (:) syntax to filter but rather the equal (=) one. Separate filters from query and keep the q parameter empty if needed. " +
  'Same for the filter parameter: keep it empty if need be. If you need to find documents that CONTAINS keywords simply put the keywords in the q parameter do no use a filter for this purpose. ' +
  'Whenever you get an error, read the error message and fix your error. ';
export const DEFAULT_SEARCH_DESCRIPTION_PROMPT = 'Search the database for relevant JSON documents using an optional query.';
export const DEFAULT_SEARCH_Q_PARAM_PROMPT =
  'The search query string used to find relevant documents in the index. This should contain keywords or phrases that best represent what the user is looking for. More specific queries will yield more precise results.';
export const DEFAULT_SEARCH_FILTER_PARAM_PROMPT =
  'The search filter string used to find relevant documents in the index. It supports parentheses, `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `_geoRadius`, or `_geoBoundingBox`. Here is an example: "price > 100 AND category = \'electronics\'". The following is a list of fields that can be filtered on: ';
export const DEFAULT_SEARCH_INDEX_UID_PARAM_PROMPT =
  'The name of the index to search within. An index is a collection of documents organized for search. Selecting the right index ensures the most relevant results for the user query.';

export interface ChatPrompts {
  system: string;
  searchDescription: string;
  searchQParam: string;
  searchFilterParam: string;
  searchIndexUidParam: string;
}

export interface ChatSettings {
  source: ChatSource;
  orgId: string | null;
  projectId: string | null;
  apiVersion: string | null;
  deploymentId: string | null;
  baseUrl: string | null;
  apiKey: string | null;
  prompts: ChatPrompts;
}

/** A `PATCH`: absent keeps a field, `null` resets it. */
export type ChatSettingsPatch = Partial<Record<Exclude<keyof ChatSettings, 'prompts'>, unknown>> & {
  prompts?: Partial<Record<keyof ChatPrompts, string | null>> | null;
};

export const PROMPT_DEFAULTS: ChatPrompts = {
  system: DEFAULT_SYSTEM_PROMPT,
  searchDescription: DEFAULT_SEARCH_DESCRIPTION_PROMPT,
  searchQParam: DEFAULT_SEARCH_Q_PARAM_PROMPT,
  searchFilterParam: DEFAULT_SEARCH_FILTER_PARAM_PROMPT,
  searchIndexUidParam: DEFAULT_SEARCH_INDEX_UID_PARAM_PROMPT,
};

export function defaultChatSettings(): ChatSettings {
  return { source: 'openAi', orgId: null, projectId: null, apiVersion: null, deploymentId: null, baseUrl: null, apiKey: null, prompts: { ...PROMPT_DEFAULTS } };
}

export function chatNotFound(uid: string): ApiError {
  return new ApiError('chat_not_found', `Chat \`${uid}\` not found`);
}

/** The settings as the API shows them: the API key masked. */
export function chatSettingsView(s: ChatSettings): ChatSettings {
  return { ...s, apiKey: s.apiKey === null ? null : hideSecret(s.apiKey), prompts: { ...s.prompts } };
}

/** The reference's check of a whole configuration: some sources need more than a key. */
function validate(s: ChatSettings): void {
  if (s.source === 'azureOpenAi' && (s.baseUrl === null || s.deploymentId === null || s.apiVersion === null)) {
    throw new ApiError('bad_request', 'azureOpenAi requires setting a valid `baseUrl`, `deploymentId`, and `apiVersion`');
  }
  if (s.source === 'vLlm' && s.baseUrl === null) throw new ApiError('bad_request', 'vLlm requires setting a valid `baseUrl`');
}

export function mergeChatSettings(old: ChatSettings, patch: ChatSettingsPatch): ChatSettings {
  const next: ChatSettings = { ...old, prompts: { ...old.prompts } };
  for (const key of ['orgId', 'projectId', 'apiVersion', 'deploymentId', 'baseUrl', 'apiKey'] as const) {
    if (patch[key] !== undefined) next[key] = patch[key] as string | null;
  }
  if (patch.source !== undefined) next.source = (patch.source as ChatSource | null) ?? 'openAi';
  if (patch.prompts === null) next.prompts = { ...PROMPT_DEFAULTS };
  else if (patch.prompts) {
    for (const [k, v] of Object.entries(patch.prompts) as [keyof ChatPrompts, string | null | undefined][]) {
      if (v !== undefined) next.prompts[k] = v ?? PROMPT_DEFAULTS[k];
    }
  }
  validate(next);
  return next;
}

export type ChatOp = { op: 'patch'; uid: string; patch: ChatSettingsPatch } | { op: 'reset'; uid: string } | { op: 'delete'; uid: string };

const CHATS = new KeySpace('cw');

export class ChatWorkspaces implements ConfigHandler {
  static readonly COMMAND = 'chatWorkspaces';
  private workspaces = new Map<string, ChatSettings>();

  get(uid: string): ChatSettings | undefined {
    return this.workspaces.get(uid);
  }

  /** Workspace uids, sorted. */
  list(): string[] {
    return [...this.workspaces.keys()].sort();
  }

  apply(raw: unknown, _at: number, wb: WriteBatch): unknown {
    const op = raw as ChatOp;
    switch (op.op) {
      case 'patch': {
        const next = mergeChatSettings(this.workspaces.get(op.uid) ?? defaultChatSettings(), op.patch);
        this.put(wb, op.uid, next);
        return chatSettingsView(next);
      }
      case 'reset': {
        if (!this.workspaces.has(op.uid)) throw chatNotFound(op.uid);
        const next = defaultChatSettings();
        this.put(wb, op.uid, next);
        return chatSettingsView(next);
      }
      case 'delete': {
        if (!this.workspaces.has(op.uid)) throw chatNotFound(op.uid);
        this.workspaces.delete(op.uid);
        wb.del(CHATS.key(op.uid));
        return null;
      }
    }
  }

  put(wb: WriteBatch, uid: string, s: ChatSettings): void {
    this.workspaces.set(uid, s);
    wb.put(CHATS.key(uid), JSON.stringify(s));
  }

  async load(reader: KvReader): Promise<void> {
    const ws = new Map<string, ChatSettings>();
    for await (const { key, value } of reader.scan({ prefix: CHATS.prefix })) {
      ws.set(CHATS.strip(key).toString(), { ...defaultChatSettings(), ...(JSON.parse(value.toString()) as ChatSettings) });
    }
    this.workspaces = ws;
  }
}
