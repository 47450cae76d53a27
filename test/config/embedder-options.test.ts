import { describe, expect, it } from 'vitest';
import { parseOptions } from '../../src/config/options.js';

describe('model hub flags', () => {
  it('caches models under the database by default and downloads from the public hub', () => {
    const o = parseOptions(['--db-path', '/srv/trine'], {});
    expect(o).toMatchObject({ hubModelsDir: '/srv/trine/hub-models', hubEndpoint: 'https://huggingface.co', hubToken: null });
  });

  it('takes the endpoint from the flag, TRINE_HUB_ENDPOINT, then HF_ENDPOINT, and the token from HF_TOKEN', () => {
    const env = { HF_ENDPOINT: 'http://mirror.local/', HF_TOKEN: 'hf_secret' };
    expect(parseOptions([], env)).toMatchObject({ hubEndpoint: 'http://mirror.local', hubToken: 'hf_secret' });
    expect(parseOptions([], { ...env, TRINE_HUB_ENDPOINT: 'http://other:8080' }).hubEndpoint).toBe('http://other:8080');
    expect(parseOptions(['--hub-endpoint', 'https://flag.example/hub/'], env).hubEndpoint).toBe('https://flag.example/hub');
    expect(parseOptions([], { TRINE_HUB_MODELS_DIR: '/models' }).hubModelsDir).toBe('/models');
  });

  it('refuses an endpoint that is not an http(s) address', () => {
    expect(() => parseOptions(['--hub-endpoint', 'huggingface.co'], {})).toThrow('--hub-endpoint: expected an http:// or https:// address, got `huggingface.co`.');
  });
});

describe('embedding server flags', () => {
  it('default to the reference patience and refuse values that say nothing', () => {
    const d = parseOptions([], {});
    expect([d.embedderTimeoutMs, d.embedderAttempts, d.embedderMaxRetryDelayMs]).toEqual([30_000, 10, 60_000]);
    const o = parseOptions(['--embedder-timeout', '2s', '--embedder-attempts', '3'], { TRINE_EMBEDDER_MAX_RETRY_DELAY: '5ms' });
    expect([o.embedderTimeoutMs, o.embedderAttempts, o.embedderMaxRetryDelayMs]).toEqual([2000, 3, 5]);
    expect(() => parseOptions(['--embedder-attempts', '0'], {})).toThrow(/--embedder-attempts: expected a number of attempts from 1 to 100, got `0`/);
    expect(() => parseOptions(['--embedder-timeout', 'soon'], {})).toThrow(/--embedder-timeout: expected a duration/);
  });
});
