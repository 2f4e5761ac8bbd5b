// serve_responses.mjs — checks a running `wick serve`'s OpenAI Responses API
// (/v1/responses) through the real `openai` npm client (v6) and the OpenAI
// Agents SDK (@openai/agents, whose default model API is Responses).
// Driven by tests/serve_responses.test.sh.
//
//   node serve_responses.mjs --name N --url http://127.0.0.1:PORT --sections shapes|tools|reasoning
//
// shapes (any chat model, random weights): greedy output_text = the chat
//   route's content for the same conversation; streamed events (order,
//   sequence numbers, deltas adding up to the final response) = the whole
//   answer; responses.stream()'s final response; max_output_tokens →
//   "incomplete"; store, retrieve, delete, store:false; previous_response_id
//   (the conversation's prompt = the chat route's for the same messages);
//   instructions; json_schema text.format; the 400s and 404s; LangChain's
//   ChatOpenAI with useResponsesApi (invoke and stream); a forced function
//   call (tool_choice named, one value allowed) whole and streamed, the
//   function_call_output turn (prompt = the chat route's), and the Agents
//   SDK's loop running the tool on it.
// reasoning (a model scripted to think, then answer): the reasoning item
//   whole and streamed, sent back through previous_response_id and by the
//   Agents SDK.
// tools (a model scripted to call get_weather for Paris, then to answer
//   "The weather in Paris is sunny."): the function_call item whole and
//   streamed, the function_call_output turn through previous_response_id and
//   as whole input, and the Agents SDK running the tool loop (run() whole
//   and streamed) with the tool executed once with {city: "Paris"}.
import OpenAI from 'openai';
import { checker, parseArgs } from './serve_util.mjs';

const a = parseArgs();
const name = a.name || 'serve_responses';
const c = checker(name);
const tag = (s) => `[${name}] ${s}`;
const client = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });
const sections = new Set((a.sections || 'shapes').split(','));
const isInt = (x) => Number.isInteger(x) && x >= 0;
const trimBlank = (s) => s.replace(/^[ \n\t\r]+|[ \n\t\r]+$/g, '');

let model;
await c.step(tag('models.list()'), async () => {
  model = (await client.models.list()).data[0].id;
});
if (!model) c.done();

function usageOk(label, u) {
  c.ok(tag(`${label}: usage {input_tokens, input_tokens_details.cached_tokens, output_tokens, output_tokens_details.reasoning_tokens, total_tokens}`),
    u && isInt(u.input_tokens) && isInt(u.output_tokens) && u.total_tokens === u.input_tokens + u.output_tokens &&
    isInt(u.input_tokens_details?.cached_tokens) && u.input_tokens_details.cached_tokens <= u.input_tokens &&
    isInt(u.output_tokens_details?.reasoning_tokens), u);
}

// The message text of a response's output (all message items, joined).
const messageText = (r) => r.output.filter((it) => it.type === 'message')
  .map((it) => it.content.map((p) => p.text).join('')).join('');

// Collect a streamed response's events; checks the framing every stream must have.
async function collect(label, stream) {
  const events = [];
  for await (const ev of stream) events.push(ev);
  const types = events.map((e) => e.type);
  c.ok(tag(`${label}: starts response.created, response.in_progress`),
    types[0] === 'response.created' && types[1] === 'response.in_progress', types.slice(0, 3));
  c.ok(tag(`${label}: sequence_number 0, 1, 2, ... in order`), events.every((e, i) => e.sequence_number === i),
    events.map((e) => e.sequence_number).slice(0, 10));
  const last = events[events.length - 1];
  c.ok(tag(`${label}: ends with response.completed or response.incomplete carrying the response`),
    (last?.type === 'response.completed' || last?.type === 'response.incomplete') && last.response?.object === 'response', last?.type);
  c.ok(tag(`${label}: created's response is in_progress with output []`),
    events[0]?.response?.status === 'in_progress' && Array.isArray(events[0].response.output) && events[0].response.output.length === 0 &&
    events[0].response.id === last?.response?.id, events[0]?.response);
  // the items' events rebuild the final output exactly
  const items = [];
  const texts = {};
  for (const e of events) {
    if (e.type === 'response.output_item.added') items[e.output_index] = { added: e.item, delta: '' };
    else if (e.type === 'response.output_text.delta' || e.type === 'response.reasoning_text.delta' ||
             e.type === 'response.function_call_arguments.delta') {
      if (items[e.output_index]) items[e.output_index].delta += e.delta;
      if (items[e.output_index]?.added.id !== e.item_id) texts.badId = e;
    } else if (e.type === 'response.output_item.done') {
      if (items[e.output_index]) items[e.output_index].done = e.item;
    }
  }
  const out = last?.response?.output || [];
  c.ok(tag(`${label}: one output_item.added and .done per final item, deltas adding up to each item's text`),
    items.length === out.length && !texts.badId && items.every((it, i) => {
      const f = out[i];
      const full = f.type === 'function_call' ? f.arguments : (f.content[0]?.text ?? '');
      return it.added.id === f.id && it.added.status === 'in_progress' && JSON.stringify(it.done) === JSON.stringify(f) &&
        it.delta === full;
    }), { items, out });
  return { events, types, response: last?.response };
}

if (sections.has('shapes')) {
  const input = 'Tell me a story about a cat.';
  let r1;
  await c.step(tag('responses.create (not streamed)'), async () => {
    r1 = await client.responses.create({ model, input, max_output_tokens: 24, temperature: 0 });
    c.ok(tag('response: object "response", id resp_..., created_at, model'),
      r1.object === 'response' && /^resp_/.test(r1.id) && isInt(r1.created_at) && r1.model === model, r1);
    c.ok(tag('response: status completed/incomplete, error null'),
      ['completed', 'incomplete'].includes(r1.status) && r1.error === null, r1.status);
    const msg = r1.output.find((it) => it.type === 'message');
    c.ok(tag('response: a message item {id msg_..., role assistant, content [{type output_text, text, annotations []}]}'),
      msg && /^msg_/.test(msg.id) && msg.role === 'assistant' && msg.content[0].type === 'output_text' &&
      typeof msg.content[0].text === 'string' && Array.isArray(msg.content[0].annotations), msg);
    c.eq(tag('response: output_text = the message text'), r1.output_text, messageText(r1));
    usageOk('response', r1.usage);
    c.ok(tag('response: echoes tools [], tool_choice "auto", parallel_tool_calls, store true, text.format text, max_output_tokens 24, temperature 0'),
      Array.isArray(r1.tools) && r1.tools.length === 0 && r1.tool_choice === 'auto' && r1.parallel_tool_calls === true &&
      r1.store === true && r1.text?.format?.type === 'text' && r1.max_output_tokens === 24 && r1.temperature === 0 &&
      r1.previous_response_id === null && r1.instructions === null, r1);
    // the same conversation through the chat route: the same greedy text, the same prompt
    const ch = await client.chat.completions.create({ model, messages: [{ role: 'user', content: input }], max_tokens: 24, temperature: 0 });
    c.eq(tag('greedy output_text = /v1/chat/completions content (blank ends left out)'), r1.output_text, trimBlank(ch.choices[0].message.content || ''));
    c.eq(tag('usage.input_tokens = chat prompt_tokens; output_tokens = chat completion_tokens'),
      [r1.usage.input_tokens, r1.usage.output_tokens], [ch.usage.prompt_tokens, ch.usage.completion_tokens]);
    c.eq(tag('status "incomplete" exactly when the chat route says "length"'), r1.status === 'incomplete', ch.choices[0].finish_reason === 'length');
  });

  await c.step(tag('streamed'), async () => {
    const s = await client.responses.create({ model, input, max_output_tokens: 24, temperature: 0, stream: true });
    const { types, response } = await collect('stream', s);
    c.ok(tag('stream: a message\'s events in order: item added, part added, text deltas, text done, part done, item done'),
      /response\.output_item\.added,response\.content_part\.added,(response\.output_text\.delta,)*response\.output_text\.done,response\.content_part\.done,response\.output_item\.done/
        .test(types.join(',')), types);
    c.eq(tag('stream: final output_text = the whole answer\'s'), response?.output_text ?? messageText(response), r1?.output_text);
    c.eq(tag('stream: same token counts as the whole answer'), [response?.usage?.input_tokens, response?.usage?.output_tokens],
      [r1?.usage?.input_tokens, r1?.usage?.output_tokens]);
    // the client's own accumulator
    const st = client.responses.stream({ model, input, max_output_tokens: 24, temperature: 0 });
    let deltas = '';
    st.on('response.output_text.delta', (e) => { deltas += e.delta; });
    const fin = await st.finalResponse();
    c.eq(tag('responses.stream(): finalResponse().output_text and the deltas = the whole answer\'s'), [fin.output_text, deltas], [r1?.output_text, r1?.output_text]);
  });

  await c.step(tag('max_output_tokens'), async () => {
    const r = await client.responses.create({ model, input, max_output_tokens: 5, temperature: 0, ignore_eos: true });
    c.eq(tag('max_output_tokens 5: status incomplete, reason max_output_tokens, 5 output tokens'),
      [r.status, r.incomplete_details?.reason, r.usage.output_tokens], ['incomplete', 'max_output_tokens', 5]);
    c.eq(tag('max_output_tokens 5: the message item is incomplete'), r.output.find((it) => it.type === 'message')?.status, 'incomplete');
    const s = await client.responses.create({ model, input, max_output_tokens: 5, temperature: 0, ignore_eos: true, stream: true });
    const { types, response } = await collect('stream cut short', s);
    c.eq(tag('streamed, cut short: ends with response.incomplete'), [types[types.length - 1], response?.incomplete_details?.reason],
      ['response.incomplete', 'max_output_tokens']);
  });

  await c.step(tag('store, retrieve, delete'), async () => {
    const got = await client.responses.retrieve(r1.id);
    c.eq(tag('retrieve: the same response'), [got.id, got.output, got.usage, got.status], [r1.id, r1.output, r1.usage, r1.status]);
    const del = await client.responses.delete(r1.id);
    c.ok(tag('delete: answered'), del === undefined || del === null || typeof del === 'object' || del === '', del);
    await c.throws(tag('retrieve after delete: 404'), () => client.responses.retrieve(r1.id),
      (e) => e instanceof OpenAI.NotFoundError, 'NotFoundError');
    await c.throws(tag('delete again: 404'), () => client.responses.delete(r1.id), (e) => e instanceof OpenAI.NotFoundError, 'NotFoundError');
    const r = await client.responses.create({ model, input: 'hi', max_output_tokens: 3, store: false });
    c.eq(tag('store false: echoed'), r.store, false);
    await c.throws(tag('store false: retrieve is 404'), () => client.responses.retrieve(r.id), (e) => e instanceof OpenAI.NotFoundError, 'NotFoundError');
    await c.throws(tag('store false: previous_response_id to it is 404 previous_response_not_found'),
      () => client.responses.create({ model, input: 'x', previous_response_id: r.id, max_output_tokens: 2 }),
      (e) => e instanceof OpenAI.NotFoundError && e.code === 'previous_response_not_found' && e.param === 'previous_response_id', '404');
  });

  await c.step(tag('previous_response_id'), async () => {
    const first = await client.responses.create({ model, input: 'Name a color.', max_output_tokens: 8, temperature: 0, instructions: 'Be brief.' });
    const second = await client.responses.create({ model, input: 'And another one.', previous_response_id: first.id, max_output_tokens: 8, temperature: 0 });
    c.eq(tag('previous_response_id: echoed'), second.previous_response_id, first.id);
    // OpenAI's rule: instructions do not carry over to the next response
    const messages = [{ role: 'user', content: 'Name a color.' }, { role: 'assistant', content: first.output_text },
      { role: 'user', content: 'And another one.' }];
    const ch = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
    c.eq(tag('previous_response_id: prompt = the chat route\'s for [user, assistant (first output), user]'),
      second.usage.input_tokens, ch.usage.prompt_tokens);
    c.eq(tag('previous_response_id: greedy text = the chat route\'s'), second.output_text, trimBlank(ch.choices[0].message.content || ''));
    const third = await client.responses.create({ model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'One more.' }] }],
      previous_response_id: second.id, max_output_tokens: 4, temperature: 0 });
    c.ok(tag('a chain of three: the prompt grows'), third.usage.input_tokens > second.usage.input_tokens, [second.usage, third.usage]);
    const withInstr = await client.responses.create({ model, input: 'Name a color.', max_output_tokens: 2, instructions: 'Be brief.' });
    const noInstr = await client.responses.create({ model, input: 'Name a color.', max_output_tokens: 2 });
    const chI = await client.chat.completions.create({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Name a color.' }], max_tokens: 1 });
    c.eq(tag('instructions: a system message first (input_tokens = the chat route\'s)'), withInstr.usage.input_tokens, chI.usage.prompt_tokens);
    c.ok(tag('instructions: echoed, and the prompt is longer than without'), withInstr.instructions === 'Be brief.' &&
      withInstr.usage.input_tokens > noInstr.usage.input_tokens, [withInstr.usage, noInstr.usage]);
  });

  await c.step(tag('text.format json_schema'), async () => {
    const schema = { type: 'object', properties: { color: { type: 'string', enum: ['red', 'blue'] } }, required: ['color'], additionalProperties: false };
    const r = await client.responses.create({ model, input: 'Pick a color as JSON.', max_output_tokens: 48, temperature: 0,
      text: { format: { type: 'json_schema', name: 'pick', schema, strict: true } } });
    c.eq(tag('json_schema: echoed text.format'), [r.text?.format?.type, r.text?.format?.name], ['json_schema', 'pick']);
    if (r.status === 'completed') {
      let v;
      try { v = JSON.parse(r.output_text); } catch { v = undefined; }
      c.ok(tag('json_schema: output_text is JSON of the schema'), v && ['red', 'blue'].includes(v.color) && Object.keys(v).length === 1, r.output_text);
    } else {
      c.ok(tag('json_schema: a cut-short answer is a prefix of JSON'), /^\s*\{/.test(r.output_text), r.output_text);
    }
  });

  await c.step(tag('errors'), async () => {
    const bad = (label, body, pred, want) => c.throws(tag(label), () => client.responses.create({ model, max_output_tokens: 2, ...body }), pred, want);
    const is400 = (param) => (e) => e instanceof OpenAI.BadRequestError && (param === undefined || e.param === param);
    await bad('tools [{type: "web_search"}]: 400 naming it', { input: 'x', tools: [{ type: 'web_search' }] },
      (e) => is400('tools')(e) && /web_search/.test(e.message), '400 tools');
    await bad('truncation "auto": 400', { input: 'x', truncation: 'auto' }, is400('truncation'), '400 truncation');
    await bad('background true: 400', { input: 'x', background: true }, is400('background'), '400 background');
    await bad('include [...logprobs]: 400', { input: 'x', include: ['message.output_text.logprobs'] }, is400('include'), '400 include');
    await bad('an input_image: 400', { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] },
      is400('input'), '400 input');
    await bad('no input: 400', {}, is400('input'), '400 input');
    await bad('max_tokens (a chat field): 400', { input: 'x', max_tokens: 3 }, is400('max_tokens'), '400 max_tokens');
    await bad('temperature "hot": 400 naming temperature', { input: 'x', temperature: 'hot' }, is400('temperature'), '400 temperature');
    await bad('an unknown model: 404', { input: 'x', model: 'no-such-model' }, (e) => e instanceof OpenAI.NotFoundError, '404');
    await bad('an unknown previous_response_id: 404 previous_response_not_found', { input: 'x', previous_response_id: 'resp_nope' },
      (e) => e instanceof OpenAI.NotFoundError && e.code === 'previous_response_not_found', '404');
    const r = await fetch(`${a.url}/v1/responses/resp_nope`, { method: 'PUT' });
    c.eq(tag('PUT /v1/responses/{id}: 405'), r.status, 405);
  });
}

if (sections.has('shapes')) await c.step(tag('LangChain ChatOpenAI useResponsesApi'), async () => {
  const { ChatOpenAI } = await import('@langchain/openai');
  const lc = new ChatOpenAI({ model, apiKey: 'sk-test', configuration: { baseURL: `${a.url}/v1` }, useResponsesApi: true,
    maxTokens: 8, temperature: 0, maxRetries: 0 });
  const want = await client.responses.create({ model, input: 'Hello', max_output_tokens: 8, temperature: 0 });
  const m = await lc.invoke('Hello');
  c.eq(tag('LangChain invoke(): text and token counts = the openai client\'s response'),
    [m.text, m.usage_metadata?.input_tokens, m.usage_metadata?.output_tokens],
    [want.output_text, want.usage.input_tokens, want.usage.output_tokens]);
  let streamed = '';
  for await (const ch of await lc.stream('Hello')) streamed += ch.text;
  c.eq(tag('LangChain stream(): the same text'), streamed, want.output_text);
});

// A forced call (tool_choice names the tool; the schema allows one value):
// the same call from any weights.
if (sections.has('shapes')) await c.step(tag('forced function call'), async () => {
  const parameters = { type: 'object', properties: { city: { type: 'string', enum: ['Paris'] } }, required: ['city'], additionalProperties: false };
  const cityTool = { type: 'function', name: 'get_weather', description: 'The weather in a city', parameters };
  const ask = 'Weather in Paris?';
  const tool_choice = { type: 'function', name: 'get_weather' };
  const r = await client.responses.create({ model, input: ask, tools: [cityTool], tool_choice, max_output_tokens: 40, temperature: 0 });
  const call = r.output[0];
  c.eq(tag('forced: one function_call get_weather {"city":"Paris"}, status completed'),
    [r.status, r.output.length, call?.type, call?.name, call && JSON.parse(call.arguments), call?.status],
    ['completed', 1, 'function_call', 'get_weather', { city: 'Paris' }, 'completed']);
  c.ok(tag('forced: ids fc_... / call_...; tool_choice and tools echoed'), /^fc_/.test(call?.id) && /^call_/.test(call?.call_id) &&
    r.tool_choice?.name === 'get_weather' && r.tools?.[0]?.name === 'get_weather', r);
  const s = await client.responses.create({ model, input: ask, tools: [cityTool], tool_choice, max_output_tokens: 40, temperature: 0, stream: true });
  const { events, response } = await collect('forced stream', s);
  const done = events.find((e) => e.type === 'response.function_call_arguments.done');
  c.eq(tag('forced stream: function_call_arguments.done = the whole answer\'s call'), [done?.name, done?.arguments], ['get_weather', call?.arguments]);
  c.eq(tag('forced stream: final output = one function_call'), response?.output.map((it) => it.type), ['function_call']);
  const one = await client.responses.create({ model, input: ask, tools: [cityTool], tool_choice: 'required', parallel_tool_calls: false,
    max_output_tokens: 60, temperature: 0 });
  c.eq(tag('required, parallel_tool_calls false: exactly one call, completed'), [one.status, one.output.map((it) => it.type)], ['completed', ['function_call']]);
  // the tool's answer: through previous_response_id, and as the whole conversation; = the chat route's prompt
  const r2 = await client.responses.create({ model, previous_response_id: r.id, tools: [cityTool], max_output_tokens: 4, temperature: 0,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
  const r3 = await client.responses.create({ model, tools: [cityTool], max_output_tokens: 4, temperature: 0, input: [
    { role: 'user', content: ask }, { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
    { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
  const ch = await client.chat.completions.create({ model, max_tokens: 4, temperature: 0,
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters } }],
    messages: [{ role: 'user', content: ask },
      { role: 'assistant', content: '', tool_calls: [{ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.call_id, content: 'sunny' }] });
  c.eq(tag('function_call_output turn: input_tokens (previous_response_id, whole input) = the chat route\'s prompt_tokens'),
    [r2.usage.input_tokens, r3.usage.input_tokens], [ch.usage.prompt_tokens, ch.usage.prompt_tokens]);
  c.eq(tag('function_call_output turn: greedy text = the chat route\'s'), [r2.output_text, r3.output_text],
    [trimBlank(ch.choices[0].message.content || ''), trimBlank(ch.choices[0].message.content || '')]);
  await c.throws(tag('a function_call_output whose call_id no call made: 400'), () => client.responses.create({ model, max_output_tokens: 2,
    input: [{ role: 'user', content: ask }, { type: 'function_call_output', call_id: 'call_nope', output: 'x' }] }),
  (e) => e instanceof OpenAI.BadRequestError, '400');

  // the Agents SDK's loop on a forced first call: the tool runs with the call's arguments and its
  // answer goes back; the random weights' reply then runs into max_output_tokens ("incomplete", which
  // the SDK raises) unless they stop first
  const { Agent, run, tool, setDefaultOpenAIClient, setTracingDisabled, setOpenAIAPI } = await import('@openai/agents');
  const { z } = await import('zod');
  setTracingDisabled(true);
  setOpenAIAPI('responses');
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 }));
  const calledWith = [];
  const getWeather = tool({ name: 'get_weather', description: 'The weather in a city', parameters: z.object({ city: z.enum(['Paris']) }),
    execute: async ({ city }) => { calledWith.push(city); return 'sunny'; } });
  const agent = new Agent({ name: 'weather', instructions: 'Use the tool.', model, tools: [getWeather],
    modelSettings: { toolChoice: 'get_weather', temperature: 0, maxTokens: 40 } });
  let outcome;
  try { outcome = (await run(agent, ask, { maxTurns: 3 })).finalOutput; } catch (e) { outcome = e; }
  c.eq(tag('Agents SDK, forced call: the tool ran once with {city: "Paris"}'), calledWith, ['Paris']);
  c.ok(tag('Agents SDK, forced call: then a reply (or the "response.incomplete" the SDK raises for one cut short)'),
    typeof outcome === 'string' || /response\.incomplete/.test(outcome?.message), String(outcome?.stack || outcome));
});

// A model scripted to think, then answer: "<think>\nI should greet.\n</think>\n\nHello there."
if (sections.has('reasoning')) await c.step(tag('reasoning'), async () => {
  const r = await client.responses.create({ model, input: 'Hi' });
  c.eq(tag('reasoning: a reasoning item (reasoning_text, summary []) then the message'),
    [r.status, r.output.map((it) => it.type), r.output[0]?.content?.[0]?.type, r.output[0]?.content?.[0]?.text, r.output[0]?.summary, r.output_text],
    ['completed', ['reasoning', 'message'], 'reasoning_text', 'I should greet.', [], 'Hello there.']);
  c.ok(tag('reasoning: item ids rs_... and msg_...'), /^rs_/.test(r.output[0]?.id) && /^msg_/.test(r.output[1]?.id), r.output);
  const s = await client.responses.create({ model, input: 'Hi', stream: true });
  const { types, events } = await collect('reasoning stream', s);
  c.ok(tag('reasoning stream: the reasoning item\'s events (part added, reasoning_text deltas, done, part done), then the message\'s'),
    /^response\.created,response\.in_progress,response\.output_item\.added,response\.content_part\.added,(response\.reasoning_text\.delta,)+response\.reasoning_text\.done,response\.content_part\.done,response\.output_item\.done,response\.output_item\.added,response\.content_part\.added,(response\.output_text\.delta,)+/
      .test(types.join(',')), types);
  c.eq(tag('reasoning stream: reasoning_text.done text'), events.find((e) => e.type === 'response.reasoning_text.done')?.text, 'I should greet.');
  // the next turn gets the reasoning item back: the same prompt as the chat route's for that conversation
  const r2 = await client.responses.create({ model, input: 'Again', previous_response_id: r.id });
  const ch = await client.chat.completions.create({ model, max_tokens: 20, messages: [{ role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello there.', reasoning_content: 'I should greet.' }, { role: 'user', content: 'Again' }] });
  c.eq(tag('reasoning, previous_response_id: input_tokens = the chat route\'s; the scripted answer again'),
    [r2.usage.input_tokens, r2.output_text], [ch.usage.prompt_tokens, 'Hello there.']);
  const { Agent, run, setDefaultOpenAIClient, setTracingDisabled, setOpenAIAPI } = await import('@openai/agents');
  setTracingDisabled(true);
  setOpenAIAPI('responses');
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 }));
  const agent = new Agent({ name: 'greeter', instructions: 'Greet.', model });
  const first = await run(agent, 'Hi');
  const second = await run(agent, [...first.history, { role: 'user', content: 'Again' }]);
  c.eq(tag('Agents SDK: finalOutput, and again with the history (its reasoning item) sent back'),
    [first.finalOutput, second.finalOutput, first.history.some((it) => it.type === 'reasoning')], ['Hello there.', 'Hello there.', true]);
});

if (sections.has('tools')) {
  const weatherTool = {
    type: 'function', name: 'get_weather', description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  };
  const ask = "What's the weather in Paris?";
  const answer = 'The weather in Paris is sunny.';
  let call;
  await c.step(tag('function call (openai client)'), async () => {
    const r = await client.responses.create({ model, input: ask, tools: [weatherTool], temperature: 0 });
    const calls = r.output.filter((it) => it.type === 'function_call');
    call = calls[0];
    c.eq(tag('turn 1: one function_call item get_weather {"city":"Paris"}'),
      [calls.length, call?.name, call && JSON.parse(call.arguments)], [1, 'get_weather', { city: 'Paris' }]);
    c.ok(tag('turn 1: the call has id fc_..., call_id call_..., status completed; no message item'),
      call && /^fc_/.test(call.id) && /^call_/.test(call.call_id) && call.status === 'completed' &&
      !r.output.some((it) => it.type === 'message'), r.output);
    c.eq(tag('turn 1: status completed, tools echoed'), [r.status, r.tools?.[0]?.name], ['completed', 'get_weather']);
    const r2 = await client.responses.create({ model, previous_response_id: r.id, tools: [weatherTool], temperature: 0,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    c.eq(tag('turn 2 (previous_response_id + function_call_output): the scripted answer'), r2.output_text, answer);
    // the same turn with the whole conversation as input (how the Agents SDK sends it)
    const r3 = await client.responses.create({ model, tools: [weatherTool], temperature: 0, input: [
      { role: 'user', content: ask },
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    c.eq(tag('turn 2 (whole conversation as input): the scripted answer, the same prompt'),
      [r3.output_text, r3.usage.input_tokens], [answer, r2.usage.input_tokens]);
    const s = await client.responses.create({ model, input: ask, tools: [weatherTool], temperature: 0, stream: true });
    const { events, response } = await collect('tool stream', s);
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('');
    c.ok(tag('tool stream: function_call_arguments deltas add up to .done\'s arguments, which parse to {city: Paris}'),
      done && deltas === done.arguments && JSON.parse(done.arguments).city === 'Paris' && done.name === 'get_weather', { deltas, done });
    c.eq(tag('tool stream: final output = one function_call'), response?.output.map((it) => [it.type, it.name]), [['function_call', 'get_weather']]);
  });

  await c.step(tag('Agents SDK tool loop'), async () => {
    const { Agent, run, tool, setDefaultOpenAIClient, setTracingDisabled, setOpenAIAPI } = await import('@openai/agents');
    const { z } = await import('zod');
    setTracingDisabled(true);
    setOpenAIAPI('responses');
    setDefaultOpenAIClient(new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 }));
    const calledWith = [];
    const getWeather = tool({
      name: 'get_weather', description: 'The weather in a city', parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => { calledWith.push(city); return `sunny in ${city}`; },
    });
    const agent = new Agent({ name: 'weather', instructions: 'Answer weather questions with the tool.', model,
      tools: [getWeather], modelSettings: { temperature: 0 } });
    const result = await run(agent, ask, { maxTurns: 4 });
    c.eq(tag('Agents SDK run(): the tool ran once with {city: "Paris"}'), calledWith, ['Paris']);
    c.eq(tag('Agents SDK run(): finalOutput = the scripted answer'), result.finalOutput, answer);
    c.ok(tag('Agents SDK run(): two model responses (call, then answer)'), result.rawResponses?.length === 2, result.rawResponses?.length);
    const streamed = await run(agent, ask, { maxTurns: 4, stream: true });
    let textDeltas = '';
    for await (const ev of streamed) {
      if (ev.type === 'raw_model_stream_event' && ev.data?.type === 'output_text_delta') textDeltas += ev.data.delta;
    }
    await streamed.completed;
    c.eq(tag('Agents SDK run(stream): the tool ran again, finalOutput = the scripted answer, the text deltas too'),
      [calledWith, streamed.finalOutput, textDeltas], [['Paris', 'Paris'], answer, answer]);
  });
}

c.done();
