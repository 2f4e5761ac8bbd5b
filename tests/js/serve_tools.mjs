// serve_tools.mjs — tool calls and reasoning through `wick serve` with the
// real clients (tests/serve_tools.test.sh drives it). Modes:
//   --mode hermes    a scripted Qwen2.5 model: turn 1 calls get_weather
//                    {"city": "Paris"}, turn 2 (after the tool's result)
//                    says "The weather in Paris is sunny."
//                    openai@6 whole and streamed, the second turn with
//                    content null and arguments as a JSON string, Vercel ai
//                    generateText / streamText running the tool, LangChain
//                    bindTools, ollama tools, and the 400s
//   --mode think     a scripted Qwen3 model that thinks first: reasoning
//                    split (reasoning_content, Ollama thinking) or kept
//                    inline (reasoning_format none)
//   --mode required  a random-weight Qwen3 model: tool_choice "required"
//                    and a named tool give calls whose arguments ajv
//                    validates against the tool's schema, seed after seed
//   --mode family    a scripted model of another family (Llama 3, Mistral,
//                    Granite: tests/data/tool_templates): the call parsed
//                    whole and streamed, forced, and the second turn
//   --mode n         the same model: n = 4 computes the prompt once (the
//                    prompt counted once in /metrics) and choice i equals
//                    the request run alone with seed + i, whole and streamed;
//                    and /v1/completions' echo, suffix (fill in the middle)
//                    and stream_options.continuous_usage_stats
//
//   node serve_tools.mjs --mode M --url http://127.0.0.1:PORT --model ID [--seeds N]
import OpenAI from 'openai';
import { generateText, streamText, tool, jsonSchema, stepCountIs } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { Ollama } from 'ollama';
import Ajv2020 from 'ajv/dist/2020.js';
import { checker, metrics, parseArgs } from './serve_util.mjs';

const a = parseArgs();
const name = a.family || a.mode; // the name run_js (serve_common.sh) reads the counts under
const c = checker(name);
const model = a.model;
const client = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });
const ollama = new Ollama({ host: a.url });

const weatherParams = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 } },
  required: ['city'],
  additionalProperties: false,
};
const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: weatherParams },
};
const ask = [{ role: 'user', content: 'What is the weather in Paris?' }];

async function post(path, body) {
  const r = await fetch(`${a.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* SSE */ }
  return { status: r.status, body: json, text };
}

// Gather a streamed chat completion: content, reasoning, calls by index, finish.
async function gather(stream) {
  let content = '', reasoning = '', finish = null, rawTag = false;
  const calls = [];
  for await (const ch of stream) {
    const ch0 = ch.choices[0];
    if (!ch0) continue;
    const d = ch0.delta || {};
    if (d.content) content += d.content;
    if (d.reasoning_content) reasoning += d.reasoning_content;
    for (const t of d.tool_calls || []) {
      if (!calls[t.index]) calls[t.index] = { id: t.id, name: t.function?.name, arguments: '' };
      if (t.function?.arguments) calls[t.index].arguments += t.function.arguments;
    }
    if (ch0.finish_reason) finish = ch0.finish_reason;
  }
  rawTag = /<tool_call>|<\/?think>/.test(content);
  return { content, reasoning, calls, finish, rawTag };
}

if (a.mode === 'hermes') {
  let firstCall;
  await c.step('openai: a whole tool call', async () => {
    const r = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0 });
    const m = r.choices[0].message;
    c.eq('finish_reason "tool_calls"', r.choices[0].finish_reason, 'tool_calls');
    c.eq('content null', m.content, null);
    c.eq('one call', m.tool_calls?.length, 1);
    const t = m.tool_calls[0];
    c.ok('call id call_…', /^call_[A-Za-z0-9]{24}$/.test(t.id), t.id);
    c.eq('type function', t.type, 'function');
    c.eq('name', t.function.name, 'get_weather');
    c.eq('arguments (a JSON string)', JSON.parse(t.function.arguments), { city: 'Paris' });
    firstCall = m;
  });
  await c.step('openai: a streamed tool call', async () => {
    const s = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0, stream: true });
    const g = await gather(s);
    c.eq('streamed: finish "tool_calls"', g.finish, 'tool_calls');
    c.eq('streamed: no content', g.content, '');
    c.ok('streamed: no raw tag in content', !g.rawTag, g.content);
    c.eq('streamed: one call, name and arguments', g.calls.map((t) => [t.name, JSON.parse(t.arguments)]), [['get_weather', { city: 'Paris' }]]);
    c.ok('streamed: the call has an id', /^call_/.test(g.calls[0]?.id || ''), g.calls[0]);
  });
  await c.step('openai: the second turn (content null, arguments as a string)', async () => {
    const msgs = [...ask, { role: 'assistant', content: null, tool_calls: firstCall.tool_calls },
      { role: 'tool', tool_call_id: firstCall.tool_calls[0].id, content: 'sunny, 24 C' }];
    const r = await client.chat.completions.create({ model, messages: msgs, tools: [weatherTool], temperature: 0 });
    c.eq('turn 2: the answer', r.choices[0].message.content, 'The weather in Paris is sunny.');
    c.eq('turn 2: finish stop', r.choices[0].finish_reason, 'stop');
    c.eq('turn 2: no calls', r.choices[0].message.tool_calls, undefined);
    // the rendered prompt shows the call's arguments once encoded, not twice
    const rr = await post('/v1/chat/completions/render', { model, messages: msgs, tools: [weatherTool] });
    c.eq('render: 200', rr.status, 200);
  });
  await c.step('tool_choice auto: a started call is held to the schema (lazy grammar)', async () => {
    // the script writes "Paris", which this schema does not allow: once the model opens <tool_call>,
    // the grammar makes the arguments valid
    const enumTool = { type: 'function', function: { name: 'get_weather',
      parameters: { type: 'object', properties: { city: { enum: ['Rome', 'Oslo'] } }, required: ['city'], additionalProperties: false } } };
    const r = await client.chat.completions.create({ model, messages: ask, tools: [enumTool], temperature: 0, parallel_tool_calls: false, max_tokens: 60 });
    const calls = r.choices[0].message.tool_calls || [];
    c.eq('auto: one call of get_weather', calls.map((t) => t.function.name), ['get_weather']);
    c.ok('auto: its arguments follow the schema', ['Rome', 'Oslo'].includes(JSON.parse(calls[0]?.function.arguments || '{}').city), calls[0]);
    c.eq('auto: finish tool_calls', r.choices[0].finish_reason, 'tool_calls');
    const o = await ollama.chat({ model, messages: ask, tools: [enumTool], options: { temperature: 0, num_predict: 60 } });
    c.ok('ollama: its arguments follow the schema', ['Rome', 'Oslo'].includes(o.message.tool_calls?.[0]?.function.arguments.city), o.message);
  });
  await c.step('openai: tool_choice none leaves the tools out', async () => {
    const r = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], tool_choice: 'none', temperature: 0, max_tokens: 8 });
    c.eq('tool_choice none: no calls', r.choices[0].message.tool_calls, undefined);
  });
  await c.step('openai: tool_choice naming the tool', async () => {
    const r = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0,
      tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    const t = r.choices[0].message.tool_calls?.[0];
    c.eq('named: the call', t && [t.function.name, JSON.parse(t.function.arguments)], ['get_weather', { city: 'Paris' }]);
    c.eq('named: finish tool_calls', r.choices[0].finish_reason, 'tool_calls');
    const cut = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0, max_tokens: 5,
      parallel_tool_calls: false, tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    c.eq('a call cut by max_tokens: finish length', cut.choices[0].finish_reason, 'length');
  });

  const provider = createOpenAICompatible({ name: 'wick', baseURL: `${a.url}/v1`, apiKey: 'sk-test' });
  const aiTools = {
    get_weather: tool({
      description: 'The weather in a city',
      inputSchema: jsonSchema(weatherParams),
      execute: async ({ city }) => `sunny in ${city}`,
    }),
  };
  await c.step('ai: generateText runs the tool and answers', async () => {
    const r = await generateText({ model: provider(model), prompt: 'What is the weather in Paris?', tools: aiTools,
      stopWhen: stepCountIs(3), temperature: 0 });
    c.eq('ai: the call', r.steps[0]?.toolCalls?.map((t) => [t.toolName, t.input]), [['get_weather', { city: 'Paris' }]]);
    c.eq('ai: the tool result', r.steps[0]?.toolResults?.map((t) => t.output), ['sunny in Paris']);
    c.eq('ai: the final text', r.text, 'The weather in Paris is sunny.');
  });
  await c.step('ai: streamText', async () => {
    const r = streamText({ model: provider(model), prompt: 'What is the weather in Paris?', tools: aiTools,
      stopWhen: stepCountIs(3), temperature: 0 });
    let text = '';
    const calls = [];
    for await (const p of r.fullStream) {
      if (p.type === 'text-delta') text += p.text;
      if (p.type === 'tool-call') calls.push([p.toolName, p.input]);
    }
    c.eq('ai stream: the call', calls, [['get_weather', { city: 'Paris' }]]);
    c.eq('ai stream: the final text', text, 'The weather in Paris is sunny.');
  });
  await c.step('langchain: bindTools', async () => {
    const llm = new ChatOpenAI({ model, temperature: 0, apiKey: 'sk-test', configuration: { baseURL: `${a.url}/v1` } });
    const bound = llm.bindTools([weatherTool]);
    const m = await bound.invoke('What is the weather in Paris?');
    c.eq('langchain: tool_calls', m.tool_calls?.map((t) => [t.name, t.args]), [['get_weather', { city: 'Paris' }]]);
    let agg;
    for await (const ch of await bound.stream('What is the weather in Paris?')) agg = agg ? agg.concat(ch) : ch;
    c.eq('langchain stream: tool_calls', agg?.tool_calls?.map((t) => [t.name, t.args]), [['get_weather', { city: 'Paris' }]]);
  });
  await c.step('ollama: tools', async () => {
    const r = await ollama.chat({ model, messages: ask, tools: [weatherTool], options: { temperature: 0 } });
    c.eq('ollama: tool_calls (arguments an object)', r.message.tool_calls?.map((t) => [t.function.name, t.function.arguments]),
      [['get_weather', { city: 'Paris' }]]);
    c.eq('ollama: no content', r.message.content, '');
    const calls = [];
    let content = '';
    for await (const p of await ollama.chat({ model, messages: ask, tools: [weatherTool], stream: true, options: { temperature: 0 } })) {
      for (const t of p.message.tool_calls || []) calls.push([t.function.name, t.function.arguments]);
      content += p.message.content;
    }
    c.eq('ollama stream: the call once', calls, [['get_weather', { city: 'Paris' }]]);
    c.eq('ollama stream: no content', content, '');
    const r2 = await ollama.chat({ model, options: { temperature: 0 }, tools: [weatherTool],
      messages: [...ask, { role: 'assistant', content: '', tool_calls: r.message.tool_calls },
        { role: 'tool', tool_name: 'get_weather', content: 'sunny, 24 C' }] });
    c.eq('ollama: the second turn', r2.message.content, 'The weather in Paris is sunny.');
  });
  await c.step('the 400s', async () => {
    const bad = async (label, body, param) => {
      const r = await post('/v1/chat/completions', { model, messages: ask, ...body });
      c.ok(`400: ${label}`, r.status === 400 && (!param || r.body?.error?.param === param), `${r.status} ${r.text.slice(0, 300)}`);
    };
    await bad('tool_choice names an unknown tool', { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice');
    await bad('tool_choice required without tools', { tool_choice: 'required' }, 'tool_choice');
    await bad('a tool without a name', { tools: [{ type: 'function', function: { parameters: {} } }] }, 'tools[0]');
    await bad('a tool of another type', { tools: [{ type: 'web_search' }] }, 'tools[0]');
    await bad('parameters not an object schema', { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'string' } } }] }, 'tools[0]');
    await bad('a schema keyword wick cannot honour, forced', { tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { not: {} } } } } }] }, 'tools');
    await bad('two tools of one name', { tools: [weatherTool, weatherTool] }, 'tools');
    await bad('a tool result answering no call', { messages: [...ask, { role: 'tool', tool_call_id: 'call_x', content: 'hi' }] }, 'messages');
    await bad('a tool result with an unknown id', { messages: [...ask,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_b', content: 'hi' }] }, 'messages');
    await bad('arguments that are not JSON', { messages: [...ask,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{oops' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: 'hi' }] }, 'messages');
  });
}

if (a.mode === 'think') {
  await c.step('openai: reasoning_content split', async () => {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'What is 2+2?' }], temperature: 0 });
    const m = r.choices[0].message;
    c.eq('content', m.content, 'The answer is 4.');
    c.eq('reasoning_content', m.reasoning_content?.trim(), 'Let me think.');
    const g = await gather(await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'What is 2+2?' }], temperature: 0, stream: true }));
    c.eq('streamed content', g.content, 'The answer is 4.');
    c.eq('streamed reasoning_content', g.reasoning.trim(), 'Let me think.');
    c.ok('streamed: no tag in content', !g.rawTag, g.content);
  });
  await c.step('reasoning_format none keeps it inline', async () => {
    const r = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'What is 2+2?' }], temperature: 0, reasoning_format: 'none' });
    c.ok('inline: <think> in content', /^<think>\s*Let me think\.\s*<\/think>\s*The answer is 4\.$/.test(r.body?.choices?.[0]?.message?.content || ''), r.body);
    c.eq('inline: no reasoning_content', r.body?.choices?.[0]?.message?.reasoning_content, undefined);
  });
  await c.step('ollama: think', async () => {
    const r = await ollama.chat({ model, messages: [{ role: 'user', content: 'What is 2+2?' }], think: true, options: { temperature: 0 } });
    c.eq('ollama: content', r.message.content, 'The answer is 4.');
    c.eq('ollama: thinking', r.message.thinking?.trim(), 'Let me think.');
    let content = '', thinking = '';
    for await (const p of await ollama.chat({ model, messages: [{ role: 'user', content: 'What is 2+2?' }], think: true, stream: true, options: { temperature: 0 } })) {
      content += p.message.content;
      thinking += p.message.thinking || '';
    }
    c.eq('ollama stream: content', content, 'The answer is 4.');
    c.eq('ollama stream: thinking', thinking.trim(), 'Let me think.');
  });
}

if (a.mode === 'required') {
  const ajv = new Ajv2020({ strict: false });
  const params = {
    type: 'object',
    properties: {
      city: { type: 'string', maxLength: 8 },
      unit: { enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    },
    required: ['city', 'unit', 'days'],
    additionalProperties: false,
  };
  const tools = [{ type: 'function', function: { name: 'get_forecast', parameters: params } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { enum: ['utc', 'cet'] } }, required: ['zone'], additionalProperties: false } } }];
  const parsed = (t) => { try { return JSON.parse(t); } catch { return undefined; } };
  const validate = { get_forecast: ajv.compile(params), get_time: ajv.compile(tools[1].function.parameters) };
  const seeds = Number(a.seeds || 100);
  // one call (parallel_tool_calls false, or a named tool): the grammar ends the turn after it
  for (const [label, choice, parallel] of [['required', 'required', false], ['named', { type: 'function', function: { name: 'get_forecast' } }, true]]) {
    let good = 0;
    const badOnes = [];
    await c.step(`tool_choice ${label}`, async () => {
      for (let seed = 1; seed <= seeds; seed++) {
        const r = await client.chat.completions.create({ model, messages: ask, tools, tool_choice: choice, parallel_tool_calls: parallel,
          temperature: 1, seed, max_tokens: 120 });
        const calls = r.choices[0].message.tool_calls || [];
        const ok = calls.length === 1 && calls.every((t) => validate[t.function.name] && validate[t.function.name](parsed(t.function.arguments))) &&
          (label === 'required' || calls[0].function.name === 'get_forecast') && r.choices[0].finish_reason === 'tool_calls';
        if (ok) good++;
        else if (badOnes.length < 3) badOnes.push(r.choices[0]);
      }
      c.ok(`tool_choice ${label}: ${good} of ${seeds} seeds give one call valid under the schema`, good === seeds, badOnes);
    });
  }
  // tool_choice auto: a random model never opens a call by itself, so a logit bias makes it open one;
  // from the opening tag on, the lazily started grammar holds the call to its tool's schema
  await c.step('tool_choice auto, a call started by the model', async () => {
    const tk = await post('/tokenize', { model, content: '<tool_call>' });
    const open = tk.body?.tokens;
    c.eq('<tool_call> is one token', open?.length, 1);
    let good = 0;
    const badOnes = [];
    for (let seed = 1; seed <= 20; seed++) {
      const r = await client.chat.completions.create({ model, messages: ask, tools, parallel_tool_calls: false,
        logit_bias: { [open[0]]: 30 }, temperature: 1, seed, max_tokens: 120 });
      const calls = r.choices[0].message.tool_calls || [];
      const ok = calls.length === 1 && validate[calls[0].function.name] && validate[calls[0].function.name](parsed(calls[0].function.arguments)) &&
        r.choices[0].finish_reason === 'tool_calls';
      if (ok) good++;
      else if (badOnes.length < 3) badOnes.push(r.choices[0]);
    }
    c.ok(`auto: ${good} of 20 seeds give one call valid under the schema`, good === 20, badOnes);
  });
  // parallel calls: random weights rarely end, so the last call may be cut by max_tokens (finish "length");
  // every call before it is whole and valid
  await c.step('tool_choice required, parallel', async () => {
    let good = 0, several = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const r = await client.chat.completions.create({ model, messages: ask, tools, tool_choice: 'required', temperature: 1, seed, max_tokens: 120 });
      const ch = r.choices[0], calls = ch.message.tool_calls || [];
      const whole = ch.finish_reason === 'length' ? calls.slice(0, -1) : calls;
      if (calls.length >= 1 && whole.every((t) => validate[t.function.name] && validate[t.function.name](parsed(t.function.arguments)))) good++;
      if (whole.length >= 2) several++;
    }
    c.ok(`parallel: 20 of 20 seeds give whole calls valid under their schemas (${good})`, good === 20);
    c.ok(`parallel: several calls in one turn (${several} seeds)`, several > 0);
  });
}

if (a.mode === 'family') {
  const idRe = new RegExp(a.idre || '^call_[A-Za-z0-9]{24}$');
  await c.step(`${a.family}: the call`, async () => {
    const r = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0 });
    const m = r.choices[0].message;
    c.eq(`${a.family}: finish tool_calls`, r.choices[0].finish_reason, 'tool_calls');
    c.eq(`${a.family}: the call`, m.tool_calls?.map((t) => [t.function.name, JSON.parse(t.function.arguments)]), [['get_weather', { city: 'Paris' }]]);
    c.ok(`${a.family}: the id`, idRe.test(m.tool_calls?.[0]?.id || ''), m.tool_calls?.[0]?.id);
    c.eq(`${a.family}: content null`, m.content, null);
    const g = await gather(await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0, stream: true }));
    c.eq(`${a.family} streamed: the call`, g.calls.map((t) => [t.name, JSON.parse(t.arguments)]), [['get_weather', { city: 'Paris' }]]);
    c.eq(`${a.family} streamed: no content`, g.content, '');
    const f = await client.chat.completions.create({ model, messages: ask, tools: [weatherTool], temperature: 0,
      tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    c.eq(`${a.family} forced: the same call`, f.choices[0].message.tool_calls?.map((t) => [t.function.name, JSON.parse(t.function.arguments)]),
      [['get_weather', { city: 'Paris' }]]);
    const msgs = [...ask, { role: 'assistant', content: null, tool_calls: m.tool_calls },
      { role: 'tool', tool_call_id: m.tool_calls[0].id, content: 'sunny, 24 C' }];
    const r2 = await client.chat.completions.create({ model, messages: msgs, tools: [weatherTool], temperature: 0 });
    c.eq(`${a.family}: the second turn`, r2.choices[0].message.content, 'The weather in Paris is sunny.');
    if (a.family !== 'llama3') { // Llama 3's bare JSON calls open with no tag: "auto" cannot start a grammar there
      const enumTool = { type: 'function', function: { name: 'get_weather',
        parameters: { type: 'object', properties: { city: { enum: ['Rome', 'Oslo'] } }, required: ['city'], additionalProperties: false } } };
      const ra = await client.chat.completions.create({ model, messages: ask, tools: [enumTool], temperature: 0, parallel_tool_calls: false, max_tokens: 60 });
      const ca = ra.choices[0].message.tool_calls || [];
      c.ok(`${a.family} auto: the call's arguments follow the schema`, ca.length === 1 && ['Rome', 'Oslo'].includes(JSON.parse(ca[0].function.arguments).city), ra.choices[0]);
    }
    const o = await ollama.chat({ model, messages: ask, tools: [weatherTool], options: { temperature: 0 } });
    c.eq(`${a.family} ollama: the call`, o.message.tool_calls?.map((t) => [t.function.name, t.function.arguments]), [['get_weather', { city: 'Paris' }]]);
  });
}

if (a.mode === 'n') {
  const body = { model, messages: [{ role: 'user', content: 'Tell me a story about a dog.' }], temperature: 1, max_tokens: 12, seed: 7 };
  await c.step('n = 4', async () => {
    const m0 = await metrics(a.url);
    const r = await client.chat.completions.create({ ...body, n: 4 });
    const m1 = await metrics(a.url);
    c.eq('n = 4: four choices, indexed', r.choices.map((x) => x.index), [0, 1, 2, 3]);
    const prompt = r.usage.prompt_tokens;
    c.eq('n = 4: the prompt counted once in /metrics', m1.byName['vllm:prompt_tokens_total'] - m0.byName['vllm:prompt_tokens_total'], prompt);
    const alone = [];
    for (let i = 0; i < 4; i++) alone.push((await client.chat.completions.create({ ...body, seed: 7 + i })).choices[0].message.content);
    c.eq('n = 4: choice i equals the request alone with seed + i', r.choices.map((x) => x.message.content), alone);
    c.ok('n = 4: the choices differ', new Set(alone).size > 1, alone);
    const texts = ['', ''];
    const finish = [null, null];
    for await (const ch of await client.chat.completions.create({ ...body, n: 2, stream: true })) {
      for (const x of ch.choices) {
        if (x.delta?.content) texts[x.index] += x.delta.content;
        if (x.finish_reason) finish[x.index] = x.finish_reason;
      }
    }
    c.eq('n = 2 streamed: each choice as alone', texts, alone.slice(0, 2));
    c.ok('n = 2 streamed: both finish', finish.every((f) => f), finish);
    const over = await post('/v1/chat/completions', { ...body, n: 9 });
    c.ok('n above --parallel: 400 naming n', over.status === 400 && over.body?.error?.param === 'n', over.text);
  });
  await c.step('completions: n > 1 and prompt arrays', async () => {
    const cb = { model, prompt: 'Once upon a time', temperature: 1, max_tokens: 10, seed: 11 };
    const m0 = await metrics(a.url);
    const r = await client.completions.create({ ...cb, n: 3 });
    const m1 = await metrics(a.url);
    c.eq('completions n = 3: three choices, indexed', r.choices.map((x) => x.index), [0, 1, 2]);
    c.eq('completions n = 3: the prompt counted once (usage and /metrics)',
      [r.usage.prompt_tokens, m1.byName['vllm:prompt_tokens_total'] - m0.byName['vllm:prompt_tokens_total']], [4, 4]);
    const alone = [];
    for (let i = 0; i < 3; i++) alone.push((await client.completions.create({ ...cb, seed: 11 + i })).choices[0].text);
    c.eq('completions n = 3: choice i equals the request alone with seed + i', r.choices.map((x) => x.text), alone);
    c.eq('completions n = 3: completion tokens summed', r.usage.completion_tokens, 30);
    const prompts = ['Once upon a time', 'The dog'];
    const solo = [];
    for (const p of prompts) solo.push((await client.completions.create({ ...cb, prompt: p })).choices[0].text);
    const arr = await client.completions.create({ ...cb, prompt: prompts });
    c.eq('prompt array: a choice per prompt, each as alone', arr.choices.map((x) => [x.index, x.text]), [[0, solo[0]], [1, solo[1]]]);
    const ids = [];
    for (const p of prompts) ids.push((await post('/tokenize', { model, prompt: p })).body.tokens);
    const arrIds = await client.completions.create({ ...cb, prompt: ids });
    c.eq('token-id prompt arrays: the same', arrIds.choices.map((x) => x.text), solo);
    const both = await client.completions.create({ ...cb, prompt: prompts, n: 2 });
    const second = (await client.completions.create({ ...cb, prompt: prompts[1], seed: 12 })).choices[0].text;
    c.eq('prompt array with n = 2: prompt p choice j is index 2p + j, with seed + j',
      both.choices.map((x) => x.text), [solo[0], alone[1], solo[1], second]);
    c.eq('prompt array with n = 2: usage counts each prompt once', both.usage.prompt_tokens, arr.usage.prompt_tokens);
    const texts = ['', '', '', ''];
    const finish = [null, null, null, null];
    let usage = null;
    for await (const ch of await client.completions.create({ ...cb, prompt: prompts, n: 2, stream: true, stream_options: { include_usage: true } })) {
      for (const x of ch.choices) {
        texts[x.index] += x.text;
        if (x.finish_reason) finish[x.index] = x.finish_reason;
      }
      if (ch.usage) usage = ch.usage;
    }
    c.eq('streamed: each choice as whole', texts, both.choices.map((x) => x.text));
    c.ok('streamed: every choice finishes', finish.every((f) => f), finish);
    c.eq('streamed: the usage', usage?.completion_tokens, both.usage.completion_tokens);
    const echo = await client.completions.create({ ...cb, prompt: prompts, echo: true, max_tokens: 2 });
    c.ok('echo: each choice starts with its own prompt', echo.choices.every((x, i) => x.text.startsWith(prompts[i])), echo.choices);
    const over = await post('/v1/completions', { ...cb, n: 9 });
    c.ok('completions n above --parallel: 400 naming n', over.status === 400 && over.body?.error?.param === 'n', over.text);
    const mixed = await post('/v1/completions', { ...cb, prompt: ['a', [1, 2]] });
    c.ok('a prompt array of mixed kinds: 400 naming prompt', mixed.status === 400 && mixed.body?.error?.param === 'prompt', mixed.text);
    const render = await post('/v1/completions/render', { model, prompt: prompts });
    c.eq('render: one entry per prompt', render.body?.map((x) => x.token_ids), ids);
  });
  await c.step('completions: echo, suffix, continuous usage', async () => {
    const base = { model, prompt: 'Once upon a time', max_tokens: 6, temperature: 0 };
    const plain = (await post('/v1/completions', base)).body.choices[0].text;
    const echoed = (await post('/v1/completions', { ...base, echo: true })).body.choices[0].text;
    c.eq('echo: the prompt, then the same output', echoed, 'Once upon a time' + plain);
    const fimText = '<|fim_prefix|>def add(a, b):<|fim_suffix|>\n    return c<|fim_middle|>';
    const ids = (await post('/tokenize', { model, content: fimText, add_special: false, parse_special: true })).body.tokens;
    const byIds = (await post('/v1/completions', { model, prompt: ids, max_tokens: 6, temperature: 0 })).body.choices[0].text;
    const fim = await post('/v1/completions', { model, prompt: 'def add(a, b):', suffix: '\n    return c', max_tokens: 6, temperature: 0 });
    c.eq('suffix: the FIM prompt <|fim_prefix|> p <|fim_suffix|> s <|fim_middle|>', fim.body?.choices?.[0]?.text, byIds);
    c.eq('suffix: its prompt tokens', fim.body?.usage?.prompt_tokens, ids.length);
    const og = await ollama.generate({ model, prompt: 'def add(a, b):', suffix: '\n    return c', options: { temperature: 0, num_predict: 6 } });
    c.eq('ollama suffix: the same middle', og.response, byIds);
    const usages = [];
    for await (const ch of await client.completions.create({ ...base, stream: true, stream_options: { continuous_usage_stats: true } }))
      if (ch.usage) usages.push(ch.usage.completion_tokens);
    c.ok('continuous_usage_stats: usage in every chunk, counting up', usages.length >= 6 && usages.every((u, i) => i === 0 || u >= usages[i - 1]), usages);
  });
}

c.done();
