// serve_anthropic.mjs — checks a running `wick serve`'s Anthropic Messages API
// (/v1/messages, /v1/messages/count_tokens) through the real `@anthropic-ai/sdk`
// client (pinned in tests/js/package.json). Driven by tests/serve_anthropic.test.sh.
//
//   node serve_anthropic.mjs --name N --url http://127.0.0.1:PORT --part random|tool|think [--key KEY]
//
// random: a random-weight model with a chat template: message shapes, the same
//         text as /v1/chat/completions for the translated body (greedy), streamed =
//         whole, event order, max_tokens, prefill, stop_sequences, count_tokens =
//         the rendered prompt, errors in Anthropic's shape (also the router's: bad
//         JSON, a wrong x-api-key).
// tool:   a scripted model whose greedy output is one Hermes tool call to
//         get_weather {"city": "Paris"}, and after a tool response "The weather in
//         Paris is sunny.": tool_use blocks whole and streamed, a forced
//         tool_choice, the tool_result turn after it.
// think:  a scripted Qwen3 model that thinks, then answers "The answer is 4.".
import Anthropic from '@anthropic-ai/sdk';
import { checker, parseArgs } from './serve_util.mjs';

const a = parseArgs();
const name = a.name || 'serve_anthropic';
const c = checker(name);
const key = a.key || 'sk-test';
const client = new Anthropic({ baseURL: a.url, apiKey: key, maxRetries: 0, timeout: 60_000 });
const tag = (s) => `[${name}] ${s}`;
const isInt = (x) => Number.isInteger(x) && x >= 0;

async function post(path, body) {
  const r = await fetch(`${a.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: r.status, body: await r.json() };
}

let model;
await c.step(tag('GET /v1/models'), async () => {
  const r = await fetch(`${a.url}/v1/models`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) });
  model = (await r.json()).data[0].id;
  c.ok(tag('a model to ask for'), typeof model === 'string' && model.length > 0, model);
});
if (!model) c.done();

// the message's shape; returns its text blocks joined and thinking blocks joined
function shapeOk(label, m, stops = ['end_turn', 'max_tokens']) {
  c.ok(tag(`${label}: id msg_…, type "message", role "assistant", model`),
    typeof m.id === 'string' && m.id.startsWith('msg_') && m.type === 'message' && m.role === 'assistant' && m.model === model, m);
  c.ok(tag(`${label}: content is an array of known blocks`), Array.isArray(m.content) &&
    m.content.every((b) => (b.type === 'text' && typeof b.text === 'string') ||
      (b.type === 'thinking' && typeof b.thinking === 'string' && b.signature === '') ||
      (b.type === 'tool_use' && typeof b.id === 'string' && b.id.startsWith('toolu_') && typeof b.name === 'string' &&
        b.input && typeof b.input === 'object' && !Array.isArray(b.input))), m.content);
  c.ok(tag(`${label}: stop_reason in ${stops.join('|')}, stop_sequence null`), stops.includes(m.stop_reason) && m.stop_sequence === null,
    [m.stop_reason, m.stop_sequence]);
  const u = m.usage;
  c.ok(tag(`${label}: usage {input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens}`),
    u && isInt(u.input_tokens) && isInt(u.output_tokens) && isInt(u.cache_read_input_tokens) && u.cache_creation_input_tokens === 0, u);
  return {
    text: m.content.filter((b) => b.type === 'text').map((b) => b.text).join(''),
    thinking: m.content.filter((b) => b.type === 'thinking').map((b) => b.thinking).join(''),
  };
}
const promptTokens = (u) => u.input_tokens + u.cache_read_input_tokens;

// the raw events of a stream: order, indices, and the message they build
async function rawStream(label, params) {
  const s = await client.messages.create({ ...params, stream: true });
  const ev = [];
  for await (const e of s) ev.push(e);
  const types = ev.map((e) => e.type);
  c.ok(tag(`${label}: message_start first, message_delta then message_stop last`),
    types[0] === 'message_start' && types.at(-1) === 'message_stop' && types.at(-2) === 'message_delta', types);
  const st = ev[0]?.message;
  c.ok(tag(`${label}: message_start has the message with empty content and usage`),
    st && st.id.startsWith('msg_') && Array.isArray(st.content) && st.content.length === 0 && st.stop_reason === null &&
    isInt(st.usage?.input_tokens), st);
  // blocks: start, deltas, stop, each index once, in order
  let open = -1, next = 0, good = true;
  for (const e of ev.slice(1, -2)) {
    if (e.type === 'content_block_start') { good &&= open === -1 && e.index === next; open = e.index; next++; }
    else if (e.type === 'content_block_delta') good &&= e.index === open;
    else if (e.type === 'content_block_stop') { good &&= e.index === open; open = -1; }
    else good = false;
  }
  c.ok(tag(`${label}: blocks start, take deltas and stop one at a time, indices 0, 1, …`), good && open === -1, types);
  return ev;
}

if (a.part === 'random') {
  const sys = 'You are terse.';
  const msgs = [{ role: 'user', content: 'Name three colors.' }];
  let whole;
  await c.step(tag('messages.create whole = /v1/chat/completions'), async () => {
    whole = await client.messages.create({ model, system: sys, messages: msgs, max_tokens: 24, temperature: 0 });
    const got = shapeOk('create', whole);
    const oai = await post('/v1/chat/completions', {
      model, messages: [{ role: 'system', content: sys }, ...msgs], max_tokens: 24, temperature: 0,
    });
    const om = oai.body.choices[0].message;
    c.eq(tag('create: text = the OpenAI route\'s content for the translated body'), got.text, om.content || '');
    c.eq(tag('create: thinking = its reasoning_content'), got.thinking, om.reasoning_content || '');
    c.eq(tag('create: output_tokens = completion_tokens'), whole.usage.output_tokens, oai.body.usage.completion_tokens);
    c.eq(tag('create: input + cache read = prompt_tokens'), promptTokens(whole.usage), oai.body.usage.prompt_tokens);
    c.eq(tag('create: stop_reason for finish_reason'), whole.stop_reason,
      { stop: 'end_turn', length: 'max_tokens' }[oai.body.choices[0].finish_reason]);
  });

  await c.step(tag('streaming'), async () => {
    const params = { model, system: sys, messages: msgs, max_tokens: 24, temperature: 0 };
    const ev = await rawStream('raw stream', params);
    const text = ev.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta').map((e) => e.delta.text).join('');
    const wholeText = whole.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    c.eq(tag('raw stream: text deltas = the whole message\'s text'), text, wholeText);
    const md = ev.at(-2);
    c.eq(tag('raw stream: message_delta stop_reason and output_tokens = whole'), [md.delta.stop_reason, md.usage.output_tokens],
      [whole.stop_reason, whole.usage.output_tokens]);
    // the SDK's own accumulation
    const s = client.messages.stream(params);
    let deltas = '';
    s.on('text', (t) => { deltas += t; });
    const fin = await s.finalMessage();
    c.eq(tag('messages.stream(): finalMessage content = whole content'), fin.content, whole.content);
    c.eq(tag('messages.stream(): text events = the text'), deltas, wholeText);
    c.eq(tag('messages.stream(): stop_reason, output_tokens = whole'), [fin.stop_reason, fin.usage.output_tokens],
      [whole.stop_reason, whole.usage.output_tokens]);
    c.eq(tag('messages.stream(): prompt tokens = whole'), promptTokens(fin.usage), promptTokens(whole.usage));
  });

  await c.step(tag('max_tokens'), async () => {
    const r = await client.messages.create({ model, messages: msgs, max_tokens: 3, temperature: 0, top_k: 1 });
    shapeOk('max_tokens 3', r);
    c.ok(tag('max_tokens 3: output_tokens <= 3, stop_reason max_tokens when 3'),
      r.usage.output_tokens <= 3 && (r.usage.output_tokens < 3 || r.stop_reason === 'max_tokens'), [r.usage, r.stop_reason]);
  });

  await c.step(tag('max_tokens 0'), async () => {
    const wm = [{ role: 'user', content: 'Warm this prompt: a cat, a dog and a bird.' }];
    const r = await client.messages.create({ model, messages: wm, max_tokens: 0 });
    c.ok(tag('max_tokens 0: no content, stop_reason max_tokens, output_tokens 0'),
      Array.isArray(r.content) && r.content.length === 0 && r.stop_reason === 'max_tokens' && r.usage.output_tokens === 0, r);
    const r2 = await client.messages.create({ model, messages: wm, max_tokens: 2, temperature: 0 });
    c.ok(tag('max_tokens 0 warmed the cache: the same prompt then reads it'), r2.usage.cache_read_input_tokens > 0 &&
      promptTokens(r2.usage) === promptTokens(r.usage), [r.usage, r2.usage]);
  });

  await c.step(tag('prefill'), async () => {
    const pm = [...msgs, { role: 'assistant', content: 'Red, green' }];
    const r = await client.messages.create({ model, messages: pm, max_tokens: 8, temperature: 0 });
    const got = shapeOk('prefill', r);
    const oai = await post('/v1/chat/completions', {
      model, messages: pm, max_tokens: 8, temperature: 0, continue_final_message: true, add_generation_prompt: false,
    });
    c.eq(tag('prefill: the continuation = the OpenAI route with continue_final_message'), got.text, oai.body.choices[0].message.content || '');
  });

  await c.step(tag('stop_sequences'), async () => {
    const r = await client.messages.create({ model, messages: msgs, max_tokens: 24, temperature: 0 });
    const t = r.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    // a stop string of 3 printable ASCII characters with some text before its first place
    let stop = null;
    for (let i = 0; i + 3 <= t.length && !stop; i++) {
      const s3 = t.slice(i, i + 3);
      if (/^[!-~][ -~]{2}$/.test(s3) && t.slice(0, t.indexOf(s3)).trim() !== '') stop = s3;
    }
    if (!stop) { c.ok(tag('stop_sequences: the greedy text has 3 printable ASCII characters after some text'), false, t); return; }
    const want = t.slice(0, t.indexOf(stop));
    const r2 = await client.messages.create({ model, messages: msgs, max_tokens: 24, temperature: 0, stop_sequences: [stop, '@@never@@'] });
    c.eq(tag(`stop_sequences ${JSON.stringify(stop)}: text ends right before it`),
      r2.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), want);
    c.eq(tag('stop_sequences: stop_reason stop_sequence, stop_sequence the one met'), [r2.stop_reason, r2.stop_sequence], ['stop_sequence', stop]);
    const s2 = client.messages.stream({ model, messages: msgs, max_tokens: 24, temperature: 0, stop_sequences: ['@@never@@', stop] });
    const f2 = await s2.finalMessage();
    c.eq(tag('stop_sequences streamed: the same text, stop_reason and stop_sequence'), [f2.content, f2.stop_reason, f2.stop_sequence],
      [r2.content, 'stop_sequence', stop]);
    const r3 = await client.messages.create({ model, messages: msgs, max_tokens: 24, temperature: 0, stop_sequences: ['@@never@@'] });
    c.eq(tag('stop_sequences never met: the whole text, stop_sequence null'), [r3.content, r3.stop_sequence], [r.content, null]);
  });

  await c.step(tag('count_tokens'), async () => {
    const r = await client.messages.countTokens({ model, system: sys, messages: msgs });
    c.ok(tag('count_tokens: {input_tokens: integer}'), isInt(r.input_tokens) && r.input_tokens > 0, r);
    c.eq(tag('count_tokens = the prompt tokens of the same create'), r.input_tokens, promptTokens(whole.usage));
    const render = await post('/v1/chat/completions/render', { model, messages: [{ role: 'system', content: sys }, ...msgs] });
    c.eq(tag('count_tokens = /v1/chat/completions/render\'s token count'), r.input_tokens, render.body.token_ids.length);
    const tools = [{ name: 'get_weather', description: 'Weather of a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
    const rt = await client.messages.countTokens({ model, system: sys, messages: msgs, tools });
    const rtr = await post('/v1/chat/completions/render', { model, messages: [{ role: 'system', content: sys }, ...msgs],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: tools[0].input_schema } }] });
    c.ok(tag('count_tokens with tools: more tokens'), rt.input_tokens > r.input_tokens, [rt.input_tokens, r.input_tokens]);
    c.eq(tag('count_tokens with tools = render with the function tools'), rt.input_tokens, rtr.body.token_ids.length);
    const rd = await client.messages.countTokens({ model, messages: msgs, thinking: { type: 'disabled' } });
    const rdr = await post('/v1/chat/completions/render', { model, messages: msgs, chat_template_kwargs: { enable_thinking: false } });
    c.eq(tag('count_tokens thinking disabled = render with enable_thinking false'), rd.input_tokens, rdr.body.token_ids.length);
    // a tool conversation: assistant tool_use, then the user's tool_result
    const conv = [...msgs,
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18C and sunny' }] }];
    const rc = await client.messages.countTokens({ model, messages: conv, tools });
    c.ok(tag('count_tokens of a tool conversation: more than without its turns'), rc.input_tokens > rt.input_tokens, [rc.input_tokens, rt.input_tokens]);
    const r3 = await client.messages.create({ model, messages: conv, tools, max_tokens: 4, temperature: 0 });
    c.eq(tag('a tool_result turn runs; its prompt tokens = count_tokens'), promptTokens(r3.usage), rc.input_tokens);
    // a forced call: the prompt ends with the call's opening where the family writes one
    for (const tool_choice of [{ type: 'tool', name: 'get_weather' }, { type: 'any' }, { type: 'none' }]) {
      const rf = await client.messages.countTokens({ model, messages: msgs, tools, tool_choice });
      const r4 = await client.messages.create({ model, messages: msgs, tools, tool_choice, max_tokens: 2, temperature: 0 });
      c.eq(tag(`tool_choice ${tool_choice.type}: count_tokens = the prompt tokens of the create`), rf.input_tokens, promptTokens(r4.usage));
    }
  });

  await c.step(tag('errors'), async () => {
    const typed = (e, cls, status, type) => e instanceof cls && e.status === status && e.error?.type === 'error' &&
      e.error?.error?.type === type && typeof e.error?.error?.message === 'string';
    await c.throws(tag('max_tokens missing → BadRequestError 400 invalid_request_error'),
      () => client.messages.create({ model, messages: msgs }),
      (e) => typed(e, Anthropic.BadRequestError, 400, 'invalid_request_error') && /max_tokens/.test(e.error.error.message), '400');
    await c.throws(tag('an image block → 400 naming it'),
      () => client.messages.create({ model, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'text', text: 'see' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }] }),
      (e) => typed(e, Anthropic.BadRequestError, 400, 'invalid_request_error') && /image/.test(e.error.error.message), '400');
    await c.throws(tag('a server tool → 400'),
      () => client.messages.create({ model, max_tokens: 4, messages: msgs, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
      (e) => typed(e, Anthropic.BadRequestError, 400, 'invalid_request_error'), '400');
    await c.throws(tag('container (not implemented) → 400'),
      () => client.messages.create({ model, max_tokens: 4, messages: msgs, container: 'c1' }),
      (e) => typed(e, Anthropic.BadRequestError, 400, 'invalid_request_error') && /container/.test(e.error.error.message), '400');
    await c.throws(tag('unknown model → NotFoundError 404 not_found_error'),
      () => client.messages.create({ model: 'no-such-model', max_tokens: 4, messages: msgs }),
      (e) => typed(e, Anthropic.NotFoundError, 404, 'not_found_error'), '404');
    await c.throws(tag('count_tokens, unknown model → 404'),
      () => client.messages.countTokens({ model: 'no-such-model', messages: msgs }),
      (e) => typed(e, Anthropic.NotFoundError, 404, 'not_found_error'), '404');
    await c.throws(tag('streamed, bad temperature → 400 before the stream'),
      async () => { const s = await client.messages.create({ model, max_tokens: 4, messages: msgs, temperature: 'hot', stream: true }); for await (const _ of s); },
      (e) => typed(e, Anthropic.BadRequestError, 400, 'invalid_request_error'), '400');
    await c.throws(tag('a prompt longer than the context → 400'),
      () => client.messages.create({ model, max_tokens: 4, messages: [{ role: 'user', content: 'word '.repeat(5000) }] }),
      (e) => typed(e, Anthropic.BadRequestError, 400, 'invalid_request_error'), '400');
    const bad = await post('/v1/messages', '{"model": ');
    c.ok(tag('a body that is not JSON → 400 in Anthropic\'s shape'), bad.status === 400 && bad.body.type === 'error' &&
      bad.body.error?.type === 'invalid_request_error' && typeof bad.body.error.message === 'string', bad);
    if (a.key) {
      const wrong = new Anthropic({ baseURL: a.url, apiKey: 'sk-wrong', maxRetries: 0, timeout: 10_000 });
      await c.throws(tag('a wrong x-api-key → AuthenticationError 401 authentication_error'),
        () => wrong.messages.create({ model, max_tokens: 4, messages: msgs }),
        (e) => typed(e, Anthropic.AuthenticationError, 401, 'authentication_error'), '401');
    }
    const r = await client.messages.create({ model, system: sys, messages: msgs, max_tokens: 24, temperature: 0 });
    c.eq(tag('after the errors: the same greedy answer'), r.content, whole.content);
  });
}

const weatherTool = { name: 'get_weather', description: 'Get the weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

if (a.part === 'tool') {
  const msgs = [{ role: 'user', content: 'What is the weather in Paris?' }];
  let whole;
  await c.step(tag('tool_use whole'), async () => {
    whole = await client.messages.create({ model, messages: msgs, tools: [weatherTool], max_tokens: 64, temperature: 0 });
    shapeOk('tool_use', whole, ['tool_use']);
    const uses = whole.content.filter((b) => b.type === 'tool_use');
    c.eq(tag('tool_use: one call, get_weather {"city": "Paris"}'), uses.map((b) => [b.name, b.input]), [['get_weather', { city: 'Paris' }]]);
    c.eq(tag('tool_use: no text around it'), whole.content.filter((b) => b.type === 'text').map((b) => b.text), []);
    c.ok(tag('tool_use: id toolu_ + characters'), /^toolu_[A-Za-z0-9_-]+$/.test(uses[0]?.id), uses[0]?.id);
  });
  await c.step(tag('tool_use streamed'), async () => {
    const params = { model, messages: msgs, tools: [weatherTool], max_tokens: 64, temperature: 0 };
    const ev = await rawStream('tool stream', params);
    const start = ev.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use');
    c.ok(tag('tool stream: content_block_start tool_use {id, name, input: {}}'),
      start && start.content_block.name === 'get_weather' && start.content_block.id.startsWith('toolu_') &&
      JSON.stringify(start.content_block.input) === '{}', start);
    const pj = ev.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' && e.index === start?.index)
      .map((e) => e.delta.partial_json).join('');
    let parsed = null;
    try { parsed = JSON.parse(pj); } catch { /* checked below */ }
    c.eq(tag('tool stream: partial_json deltas join to the input'), parsed, { city: 'Paris' });
    c.eq(tag('tool stream: message_delta stop_reason tool_use'), ev.at(-2).delta.stop_reason, 'tool_use');
    const fin = await client.messages.stream(params).finalMessage();
    c.eq(tag('messages.stream(): finalMessage blocks = whole (ids aside)'),
      fin.content.map(({ id, ...b }) => b), whole.content.map(({ id, ...b }) => b));
    c.eq(tag('messages.stream(): stop_reason tool_use'), fin.stop_reason, 'tool_use');
  });
  await c.step(tag('tool_choice'), async () => {
    const r = await client.messages.create({ model, messages: msgs, tools: [weatherTool], max_tokens: 64, temperature: 0,
      tool_choice: { type: 'tool', name: 'get_weather' } });
    c.eq(tag('tool_choice {type: tool}: the call'), r.content.filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input]),
      [['get_weather', { city: 'Paris' }]]);
    const r2 = await client.messages.create({ model, messages: msgs, tools: [weatherTool], max_tokens: 64, temperature: 0,
      tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    c.eq(tag('tool_choice {type: any, disable_parallel_tool_use}: the call'),
      r2.content.filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input]), [['get_weather', { city: 'Paris' }]]);
  });
  await c.step(tag('tool_result turn'), async () => {
    const use = whole.content.find((b) => b.type === 'tool_use');
    const conv = [...msgs, { role: 'assistant', content: whole.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C and sunny' }] }];
    const n = await client.messages.countTokens({ model, messages: conv, tools: [weatherTool] });
    const r = await client.messages.create({ model, messages: conv, tools: [weatherTool], max_tokens: 64, temperature: 0 });
    shapeOk('after tool_result', r, ['end_turn']);
    c.eq(tag('after tool_result: the answer'), r.content, [{ type: 'text', text: 'The weather in Paris is sunny.' }]);
    const s = client.messages.stream({ model, messages: conv, tools: [weatherTool], max_tokens: 64, temperature: 0 });
    let deltas = '';
    s.on('text', (t) => { deltas += t; });
    const fin = await s.finalMessage();
    c.eq(tag('after tool_result, streamed: the same answer, text events'), [fin.content, deltas, fin.stop_reason],
      [r.content, 'The weather in Paris is sunny.', 'end_turn']);
    c.eq(tag('after tool_result: prompt tokens = count_tokens'), promptTokens(r.usage), n.input_tokens);
    c.ok(tag('after tool_result: the prompt holds the earlier turn (more tokens)'), n.input_tokens > promptTokens(whole.usage),
      [n.input_tokens, promptTokens(whole.usage)]);
  });
}

if (a.part === 'think') {
  const msgs = [{ role: 'user', content: 'What is 2+2?' }];
  let whole;
  await c.step(tag('thinking whole'), async () => {
    whole = await client.messages.create({ model, messages: msgs, max_tokens: 64, temperature: 0,
      thinking: { type: 'enabled', budget_tokens: 1024 } });
    shapeOk('thinking', whole, ['end_turn']);
    c.eq(tag('thinking: a thinking block, then the answer'), whole.content,
      [{ type: 'thinking', thinking: 'Let me think.', signature: '' }, { type: 'text', text: 'The answer is 4.' }]);
    // the thinking turn back in the history: it renders, and counts as the create does
    const conv = [...msgs, { role: 'assistant', content: whole.content }, { role: 'user', content: 'And 3+3?' }];
    const n = await client.messages.countTokens({ model, messages: conv });
    const r2 = await client.messages.create({ model, messages: conv, max_tokens: 64, temperature: 0 });
    c.eq(tag('thinking in the history: prompt tokens = count_tokens'), promptTokens(r2.usage), n.input_tokens);
  });
  await c.step(tag('thinking streamed'), async () => {
    const params = { model, messages: msgs, max_tokens: 64, temperature: 0, thinking: { type: 'enabled', budget_tokens: 1024 } };
    const ev = await rawStream('thinking stream', params);
    const starts = ev.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type);
    c.eq(tag('thinking stream: a thinking block, then a text block'), starts, ['thinking', 'text']);
    const th = ev.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'thinking_delta').map((e) => e.delta.thinking).join('');
    c.eq(tag('thinking stream: thinking deltas = the whole thinking'), th, whole.content[0]?.thinking);
    const fin = await client.messages.stream(params).finalMessage();
    c.eq(tag('messages.stream(): finalMessage content = whole'), fin.content, whole.content);
    const om = await client.messages.create({ ...params, thinking: { type: 'enabled', budget_tokens: 1024, display: 'omitted' } });
    c.eq(tag('display omitted: the thinking block comes back empty'), om.content.map((b) => b.type === 'thinking' ? b.thinking : b.text),
      ['', whole.content[1]?.text]);
  });
}

c.done();
