// serve_limits.mjs — `wick serve --api-key KEY --parallel 1 --max-queue 1`
// through the `openai` client: a wrong key is an AuthenticationError (401)
// while /health and /metrics stay open; a full queue answers 503 (or 429) with
// retry-after, which the client would retry; aborted streams leave nothing
// running. Driven by tests/serve_openai.test.sh.
//
//   node serve_limits.mjs --name N --url URL --key KEY --ctx CTX
import OpenAI from 'openai';
import { checker, parseArgs, metrics, sleep } from './serve_util.mjs';

const a = parseArgs();
const c = checker(a.name || 'limits');
const base = `${a.url}/v1`;
const good = new OpenAI({ baseURL: base, apiKey: a.key, maxRetries: 0 });
const wrong = new OpenAI({ baseURL: base, apiKey: 'sk-wrong', maxRetries: 0 });
const ctx = Number(a.ctx || 2048);

await c.throws('wrong API key → AuthenticationError 401', () => wrong.models.list(),
  (e) => e instanceof OpenAI.AuthenticationError && e.status === 401, 'AuthenticationError 401');
await c.throws('wrong API key on completions → 401', () => wrong.completions.create({ prompt: 'hi', max_tokens: 2, model: 'x' }),
  (e) => e instanceof OpenAI.AuthenticationError, 'AuthenticationError 401');
{
  const r = await fetch(`${base}/models`);
  c.eq('no Authorization header → 401', r.status, 401);
  c.eq('/health needs no key', (await fetch(`${a.url}/health`)).status, 200);
  c.eq('/metrics needs no key', (await fetch(`${a.url}/metrics`)).status, 200);
}
let model;
await c.step('right key', async () => {
  model = (await good.models.list()).data[0].id;
  const r = await good.completions.create({ model, prompt: 'Once upon a time', max_tokens: 5, temperature: 0 });
  c.ok('right API key → completion', typeof r.choices[0].text === 'string' && r.usage.completion_tokens === 5, r);
});

// one sequence, one queue place: of 5 long streams, at least 3 are refused
await c.step('queue full', async () => {
  const acs = [], outcomes = [];
  const ps = [];
  for (let i = 0; i < 5; i++) {
    const ac = new AbortController(); acs.push(ac);
    ps.push(good.completions.create({ model, prompt: `Once upon a time ${i}`, max_tokens: ctx - 32, temperature: 0, ignore_eos: true, stream: true }, { signal: ac.signal })
      .then(async (s) => { for await (const _ of s); outcomes[i] = 'ok'; })
      .catch((e) => { outcomes[i] = e; }));
    await sleep(30);
  }
  await sleep(300);
  for (const ac of acs) ac.abort();
  await Promise.all(ps);
  const refused = outcomes.filter((e) => e instanceof OpenAI.APIError && (e.status === 503 || e.status === 429));
  c.ok(`--parallel 1 --max-queue 1, 5 long streams: >= 3 refused with 503/429 (${refused.length})`, refused.length >= 3,
    outcomes.map((e) => (e === 'ok' ? 'ok' : e === undefined ? 'aborted' : `${e.status} ${e.message}`)));
  c.ok('the refusals carry retry-after and a JSON error', refused.length > 0 && refused.every((e) => e.headers?.get('retry-after') && e.error?.message),
    refused.map((e) => [e.headers?.get('retry-after'), e.error]));
  let m = await metrics(a.url), w = 0;
  const busy = (mm) => Object.entries(mm.series).filter(([k]) => /^vllm:num_requests_(running|waiting)/.test(k)).reduce((s, [, v]) => s + v, 0);
  while (busy(m) && w < 10_000) { await sleep(50); w += 50; m = await metrics(a.url); }
  c.eq(`after aborting them: nothing running or waiting (${w} ms)`, busy(m), 0);
  const r = await good.completions.create({ model, prompt: 'Once upon a time', max_tokens: 5, temperature: 0 });
  c.eq('and a new request is served', r.usage.completion_tokens, 5);
});
c.done();
