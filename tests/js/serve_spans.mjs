// serve_spans.mjs — span requests over HTTP against running `wick serve`s,
// through the real `openai` npm client (v6) and fetch. Driven by
// tests/serve_spans.test.sh.
//
//   node serve_spans.mjs --name N --url URL --nocache-url URL --chat-url URL --refs REFS.json
//
// REFS.json: {prefix, docs: [text...], suffix, n, seq, shared, blend} where seq/shared/blend
// are `wick generate --prefix --span ... --temp 0 --json` objects for the same model and ctx
// (default options; --positions shared; --anchor none --blend-first-k 3).
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { checker, parseArgs, metrics, words } from './serve_util.mjs';

const a = parseArgs();
const c = checker(a.name || 'serve_spans');
const R = JSON.parse(readFileSync(a.refs, 'utf8'));
const opts = { apiKey: 'sk-test', maxRetries: 0, timeout: 60_000 };
const client = new OpenAI({ baseURL: `${a.url}/v1`, ...opts });
const nocache = new OpenAI({ baseURL: `${a['nocache-url']}/v1`, ...opts });
const chatClient = new OpenAI({ baseURL: `${a['chat-url']}/v1`, ...opts });
const isInt = (x) => Number.isInteger(x) && x >= 0;
const sum = (xs) => xs.reduce((s, x) => s + x, 0);
const spanTokens = sum(R.seq.segments.spans.map((s) => s.length));

async function post(base, path, body, { raw = false, type = 'application/json' } = {}) {
  const r = await fetch(`${base}${path}`, {
    method: 'POST', headers: { 'Content-Type': type }, body: raw ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* SSE or not JSON */ }
  return { status: r.status, text, json, type: r.headers.get('content-type') };
}

// the text of an SSE chat or completion stream
function sseText(body) {
  let out = '', done = false, chunks = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const d = line.slice(6);
    if (d === '[DONE]') { done = true; continue; }
    const j = JSON.parse(d);
    chunks++;
    for (const ch of j.choices || []) out += ch.delta ? (ch.delta.content || '') : (ch.text || '');
  }
  return { text: out, done, chunks };
}

const spanPrompt = (spans = R.docs) => ({ prefix: R.prefix, spans, suffix: R.suffix });
const details = (r) => r.usage && r.usage.prompt_tokens_details;

// ---- /v1/completions with a prompt object = `wick generate --prefix --span --span -p`
let model;
await c.step('completions span prompt', async () => {
  model = (await client.models.list()).data[0].id;
  const m0 = await metrics(a.url);
  const r1 = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0 });
  c.eq('completions span prompt: text = wick generate --prefix --span --span -p --temp 0', r1.choices[0].text, R.seq.text);
  c.eq('completions span prompt: completion_tokens = wick generate tokens', r1.usage.completion_tokens, R.seq.tokens.length);
  c.eq('completions span prompt: prompt_tokens = wick generate prompt_tokens', r1.usage.prompt_tokens, R.seq.prompt_tokens);
  c.eq('completions span prompt: finish_reason = wick generate', r1.choices[0].finish_reason, R.seq.finish_reason);
  c.eq('completions span prompt, cold: span_cached_tokens 0', details(r1).span_cached_tokens, 0);

  const rd = await post(a.url, '/v1/completions/render', { model, prompt: spanPrompt() });
  c.eq('render of a span prompt: segments = wick generate --json segments', rd.json && rd.json[0].segments, R.seq.segments);
  c.eq('render of a span prompt: token_ids = prefix, spans and suffix in order', rd.json && rd.json[0].token_ids,
    [...R.seq.segments.prefix, ...R.seq.segments.spans.flat(), ...R.seq.segments.suffix]);

  const r2 = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0 });
  c.eq('completions span prompt again: same text', r2.choices[0].text, R.seq.text);
  c.eq('completions span prompt again: span_cached_tokens = every span token', details(r2).span_cached_tokens, spanTokens);
  c.ok('completions span prompt again: cached_tokens >= span_cached_tokens', details(r2).cached_tokens >= spanTokens, r2.usage);

  const m1 = await metrics(a.url);
  const dq = (m1.byName['wick:span_cache_queries_total'] || 0) - (m0.byName['wick:span_cache_queries_total'] || 0);
  const dh = (m1.byName['wick:span_cache_hits_total'] || 0) - (m0.byName['wick:span_cache_hits_total'] || 0);
  c.ok('metrics: wick:span_cache_queries_total and _hits_total series with model_name',
    `wick:span_cache_queries_total{model_name="${model}"}` in m1.series && `wick:span_cache_hits_total{model_name="${model}"}` in m1.series, m1.text.slice(0, 200));
  c.eq('metrics: span_cache_queries_total grew by the span tokens of both requests', dq, 2 * spanTokens);
  c.eq('metrics: span_cache_hits_total grew by the second request\'s span tokens', dh, spanTokens);

  // the segments as token ids: the same request
  const ids = { prefix: R.seq.segments.prefix, spans: R.seq.segments.spans, suffix: R.seq.segments.suffix };
  const r3 = await client.completions.create({ model, prompt: ids, max_tokens: R.n, temperature: 0 });
  c.eq('completions span prompt as token ids: same text', r3.choices[0].text, R.seq.text);

  // streamed, with usage
  const s = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0, stream: true,
    stream_options: { include_usage: true } });
  let text = '', usage = null;
  for await (const ch of s) {
    for (const choice of ch.choices || []) text += choice.text || '';
    if (ch.usage) usage = ch.usage;
  }
  c.eq('completions span prompt streamed: same text', text, R.seq.text);
  c.eq('completions span prompt streamed: usage span_cached_tokens', usage && usage.prompt_tokens_details.span_cached_tokens, spanTokens);

  // an ordinary request has no span_cached_tokens
  const r4 = await client.completions.create({ model, prompt: R.prefix, max_tokens: 4, temperature: 0 });
  c.ok('ordinary completion: no span_cached_tokens in usage', details(r4) && !('span_cached_tokens' in details(r4)), r4.usage);
});

await c.step('completions span_cache options', async () => {
  const shared = { positions: 'shared' };
  const r1 = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0, span_cache: shared });
  c.eq('positions shared: text = wick generate --positions shared', r1.choices[0].text, R.shared.text);
  const rev = [...R.docs].reverse();
  const r2 = await client.completions.create({ model, prompt: spanPrompt(rev), max_tokens: R.n, temperature: 0, span_cache: shared });
  c.eq('positions shared, spans shuffled: identical text', r2.choices[0].text, r1.choices[0].text);
  c.eq('positions shared, spans shuffled: every span from the cache', details(r2).span_cached_tokens, spanTokens);
  const blend = { anchor: 'none', blend: { first_k: 3 } };
  const r3 = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0, span_cache: blend });
  c.eq('anchor none, blend first_k 3: text = wick generate --anchor none --blend-first-k 3', r3.choices[0].text, R.blend.text);
  const r4 = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0,
    span_cache: { anchor: 'bos', positions: 'sequential', blend: { first_k: 0 } } });
  c.ok('anchor bos: a completion', typeof r4.choices[0].text === 'string' && r4.usage.completion_tokens > 0, r4);
  const r5 = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0,
    span_cache: { anchor: R.seq.segments.prefix } });
  c.eq('anchor as token ids (= the prefix): text = the default anchor\'s', r5.choices[0].text, R.seq.text);
});

// ---- --no-span-cache: same answers, nothing from the span cache
await c.step('--no-span-cache', async () => {
  for (const round of ['first', 'second']) {
    const r = await nocache.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0 });
    c.eq(`--no-span-cache, ${round} request: same text`, r.choices[0].text, R.seq.text);
    c.eq(`--no-span-cache, ${round} request: span_cached_tokens 0`, details(r).span_cached_tokens, 0);
  }
  const m = await metrics(a['nocache-url']);
  c.eq('--no-span-cache: span_cache_hits_total stays 0', m.byName['wick:span_cache_hits_total'], 0);
});

// ---- chat with span messages (random model with a ChatML template)
const sys = { role: 'system', content: 'You answer questions about the documents.' };
const docMsgs = [
  { role: 'user', content: 'Document A: the cat sat on the mat.', span: true },
  { role: 'user', content: 'Document B: the dog ran in the park.', span: true },
];
const question = { role: 'user', content: 'Which animal ran?' };
const chatMsgs = [sys, ...docMsgs, question];
const CN = 16;
let chatText, chatModel, chatSpanTokens;
await c.step('chat span messages', async () => {
  chatModel = (await chatClient.models.list()).data[0].id;
  const rd = await post(a['chat-url'], '/v1/chat/completions/render', { model: chatModel, messages: chatMsgs });
  const seg = rd.json && rd.json.segments;
  c.ok('chat render with span messages: segments with two spans', seg && seg.spans.length === 2 && seg.prefix.length > 0 && seg.suffix.length > 0, rd.json);
  const plain = chatMsgs.map(({ span, ...m }) => m);
  const rp = await post(a['chat-url'], '/v1/chat/completions/render', { model: chatModel, messages: plain });
  c.eq('chat render: segments joined = the conversation rendered whole (ChatML splits at special tokens)',
    rd.json && rd.json.token_ids, rp.json && rp.json.token_ids);
  chatSpanTokens = seg ? sum(seg.spans.map((s) => s.length)) : -1;

  const r1 = await chatClient.chat.completions.create({ model: chatModel, messages: chatMsgs, max_tokens: CN, temperature: 0 });
  chatText = r1.choices[0].message.content;
  c.ok('chat span request (openai client): an answer', typeof chatText === 'string' && r1.usage.completion_tokens > 0, r1);
  c.eq('chat span request: prompt_tokens = the segments', r1.usage.prompt_tokens, rd.json && rd.json.token_ids.length);
  const r2 = await chatClient.chat.completions.create({ model: chatModel, messages: chatMsgs, max_tokens: CN, temperature: 0 });
  c.eq('chat span request twice: same answer', r2.choices[0].message.content, chatText);
  c.eq('chat span request twice: span_cached_tokens = the span segments', details(r2).span_cached_tokens, chatSpanTokens);

  const s = await chatClient.chat.completions.create({ model: chatModel, messages: chatMsgs, max_tokens: CN, temperature: 0, stream: true });
  let text = '';
  for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
  c.eq('chat span request streamed: same answer', text, chatText);

  const rc = await chatClient.completions.create({ model: chatModel, prompt: { prefix: seg.prefix, spans: seg.spans, suffix: seg.suffix },
    max_tokens: CN, temperature: 0 });
  c.eq('chat span request = /v1/completions with its segments as ids', rc.choices[0].text, chatText);
});

// ---- spnl's /v1/query/execute
const spnlQuery = (input, extra = {}) => ({ g: { model: chatModel, input, max_tokens: CN, temperature: 0, ...extra } });
const spnlInput = { cross: [{ system: sys.content }, { plus: docMsgs.map((m) => ({ user: m.content })) }, { user: question.content }] };
await c.step('spnl /v1/query/execute', async () => {
  const r = await post(a['chat-url'], '/v1/query/execute', JSON.stringify(spnlQuery(spnlInput)), { raw: true, type: 'text/plain' });
  c.eq('query/execute (text/plain): status 200', r.status, 200);
  c.ok('query/execute: a chat.completion', r.json && r.json.object === 'chat.completion' && r.json.choices.length === 1, r.text);
  c.eq('query/execute: same text as the chat span request', r.json && r.json.choices[0].message.content, chatText);
  c.eq('query/execute: span_cached_tokens (spans cached by the chat requests)', r.json && r.json.usage.prompt_tokens_details.span_cached_tokens, chatSpanTokens);

  const rs = await post(a['chat-url'], '/v1/query/execute?stream=true', JSON.stringify({ repeat: { n: 1, g: spnlQuery(spnlInput).g } }), { raw: true, type: 'text/plain' });
  const st = sseText(rs.text);
  c.ok('query/execute?stream=true (repeat n 1, as spnl\'s client sends): SSE ending in [DONE]', rs.status === 200 && /event-stream/.test(rs.type || '') && st.done && st.chunks > 1, rs.text.slice(0, 300));
  c.eq('query/execute?stream=true: same text', st.text, chatText);

  const rj = await post(a['chat-url'], '/v1/query/execute?stream=false', spnlQuery({ seq: [{ system: sys.content }, { plus: docMsgs.map((m) => ({ user: m.content })) }, question.content] }));
  c.eq('query/execute (application/json, seq, bare string leaf): same text', rj.json && rj.json.choices[0].message.content, chatText);

  const rw = await post(a['chat-url'], '/v1/query/execute', { monad: spnlQuery({ cross: [{ system: sys.content }, { plus: [{ user: 'Document C: a bird flew.' }] }, { user: question.content }] }) });
  c.ok('query/execute monad: computes the prompt only (no tokens)', rw.status === 200 && rw.json.usage.completion_tokens === 0 && rw.json.choices[0].message.content === '', rw.text);

  const plainQ = await post(a['chat-url'], '/v1/query/execute', spnlQuery({ cross: [{ system: sys.content }, { user: question.content }] }));
  const plainC = await chatClient.chat.completions.create({ model: chatModel, messages: [sys, question], max_tokens: CN, temperature: 0 });
  c.eq('query/execute without plus: the ordinary chat answer', plainQ.json && plainQ.json.choices[0].message.content, plainC.choices[0].message.content);
});

// ---- bad requests: 400 with OpenAI's error object, and the servers keep serving
function errShape(r) {
  const e = r.json && r.json.error;
  return e && typeof e.message === 'string' && e.message.length > 0 && typeof e.type === 'string' && 'param' in e && 'code' in e;
}
await c.step('bad span requests', async () => {
  const long = [words(300, 1), words(300, 2)];
  const bad = [
    ['empty span', { prompt: spanPrompt(['', R.docs[1]]) }],
    ['empty suffix', { prompt: { prefix: R.prefix, spans: R.docs, suffix: '' } }],
    ['no suffix', { prompt: { prefix: R.prefix, spans: R.docs } }],
    ['no spans', { prompt: { prefix: R.prefix, suffix: R.suffix } }],
    ['spans not an array', { prompt: { spans: 'x', suffix: R.suffix } }],
    ['a span of the wrong type', { prompt: { spans: [7], suffix: R.suffix } }],
    ['span ids out of range', { prompt: { spans: [[1, 999999]], suffix: R.suffix } }],
    ['prefix of the wrong type', { prompt: { prefix: {}, spans: R.docs, suffix: R.suffix } }],
    ['unknown anchor', { prompt: spanPrompt(), span_cache: { anchor: 'middle' } }],
    ['anchor of the wrong type', { prompt: spanPrompt(), span_cache: { anchor: 3 } }],
    ['unknown positions', { prompt: spanPrompt(), span_cache: { positions: 'diagonal' } }],
    ['blend first_k negative', { prompt: spanPrompt(), span_cache: { blend: { first_k: -1 } } }],
    ['blend first_k not an integer', { prompt: spanPrompt(), span_cache: { blend: { first_k: 1.5 } } }],
    ['blend not an object', { prompt: spanPrompt(), span_cache: { blend: 4 } }],
    ['blend topk_ratio (unsupported)', { prompt: spanPrompt(), span_cache: { blend: { topk_ratio: 0.15 } } }],
    ['span_cache not an object', { prompt: spanPrompt(), span_cache: 'shared' }],
    ['too many spans', { prompt: spanPrompt(Array(257).fill('a')) }],
    ['spans longer than the context', { prompt: spanPrompt(long) }],
  ];
  for (const [label, body] of bad) {
    const r = await post(a.url, '/v1/completions', { model, max_tokens: 4, ...body });
    c.ok(`400 for ${label}`, r.status === 400 && errShape(r), `${r.status} ${r.text.slice(0, 200)}`);
  }
  const over = await post(a.url, '/v1/completions', { model, max_tokens: 4, prompt: spanPrompt(long) });
  c.ok('spans longer than the context: the library\'s message, code context_length_exceeded',
    over.json && /prefix, spans and suffix/.test(over.json.error.message) && over.json.error.code === 'context_length_exceeded', over.text);

  const badChat = [
    ['non-span message between spans', [sys, docMsgs[0], question, docMsgs[1]]],
    ['span not a bool', [sys, { ...docMsgs[0], span: 'yes' }, question]],
  ];
  for (const [label, messages] of badChat) {
    const r = await post(a['chat-url'], '/v1/chat/completions', { model: chatModel, messages, max_tokens: 4 });
    c.ok(`chat: 400 for ${label}`, r.status === 400 && errShape(r), `${r.status} ${r.text.slice(0, 200)}`);
  }
  const nothingAfter = await post(a['chat-url'], '/v1/chat/completions', { model: chatModel, messages: [sys, ...docMsgs], add_generation_prompt: false, max_tokens: 4 });
  c.ok('chat: 400 when nothing follows the spans', nothingAfter.status === 400 && errShape(nothingAfter), nothingAfter.text);

  const badQ = [
    ['zip', spnlQuery({ zip: [] })],
    ['par at the top', { par: [spnlQuery(spnlInput)] }],
    ['repeat n 2', { repeat: { n: 2, g: spnlQuery(spnlInput).g } }],
    ['plus inside plus', spnlQuery({ plus: [{ plus: [{ user: 'a' }] }] })],
    ['no input', { g: { model: chatModel, max_tokens: 4 } }],
    ['an unknown node', spnlQuery({ shuffle: [] })],
    ['messages between plus groups', spnlQuery({ cross: [{ plus: [{ user: 'a' }] }, { user: 'q' }, { plus: [{ user: 'b' }] }, { user: 'q2' }] })],
  ];
  for (const [label, q] of badQ) {
    const r = await post(a['chat-url'], '/v1/query/execute', JSON.stringify(q), { raw: true, type: 'text/plain' });
    c.ok(`query/execute: 400 for ${label}`, r.status === 400 && errShape(r), `${r.status} ${r.text.slice(0, 200)}`);
  }
  const bs = await post(a['chat-url'], '/v1/query/execute?stream=maybe', JSON.stringify(spnlQuery(spnlInput)), { raw: true, type: 'text/plain' });
  c.ok('query/execute: 400 for stream=maybe', bs.status === 400 && errShape(bs), bs.text);

  for (const [label, base] of [['stories', a.url], ['chat', a['chat-url']]]) {
    const h = await fetch(`${base}/health`);
    c.eq(`${label} server healthy after the bad requests`, h.status, 200);
  }
  const again = await client.completions.create({ model, prompt: spanPrompt(), max_tokens: R.n, temperature: 0 });
  c.eq('the span completion after the bad requests: same text', again.choices[0].text, R.seq.text);
});

c.done();
