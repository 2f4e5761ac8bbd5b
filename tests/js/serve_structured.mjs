// serve_structured.mjs — structured output through `wick serve` with the
// real clients (tests/serve_structured.test.sh drives it):
//   openai@6  chat.completions.parse() with a zod schema (zodResponseFormat)
//   ai        generateObject via @ai-sdk/openai-compatible (json_schema)
//   @langchain/openai  withStructuredOutput (jsonSchema and jsonMode)
//   ollama    generate / chat with format: a schema, and "json"
// and raw requests for the other spellings (llama.cpp grammar / json_schema,
// vLLM structured_outputs and guided_*), sampled outputs validated by ajv
// (an independent validator) at temperature 1 over many seeds, and the 400s.
//
//   node serve_structured.mjs --name N --url http://127.0.0.1:PORT --model ID [--chat]
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { generateObject } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { Ollama } from 'ollama';
import Ajv2020 from 'ajv/dist/2020.js';
import { checker, parseArgs } from './serve_util.mjs';

const a = parseArgs();
const name = a.name || 'serve_structured';
const c = checker(name);
const tag = (s) => `[${name}] ${s}`;
const model = a.model;
const client = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });

// Small, bounded schemas: random weights must be able to finish them.
const Pet = z.object({
  kind: z.enum(['cat', 'dog', 'bird']),
  age: z.number().int().min(0).max(30),
  indoor: z.boolean(),
  name: z.string().max(6),
});
const petOk = (o) => o && ['cat', 'dog', 'bird'].includes(o.kind) && Number.isInteger(o.age) && o.age >= 0 &&
  o.age <= 30 && typeof o.indoor === 'boolean' && typeof o.name === 'string' && [...o.name].length <= 6;

const petSchema = {
  type: 'object',
  properties: {
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 30 },
    indoor: { type: 'boolean' },
    name: { type: 'string', maxLength: 6 },
  },
  required: ['kind', 'age', 'indoor', 'name'],
  additionalProperties: false,
};

async function post(path, body) {
  const r = await fetch(`${a.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

if (a.chat) {
  await c.step(tag('openai .parse() with zod'), async () => {
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.parse({
        model, messages: [{ role: 'user', content: 'Describe a pet as JSON.' }],
        response_format: zodResponseFormat(Pet, 'pet'), max_tokens: 200, temperature: 1, seed,
      });
      const m = r.choices[0].message;
      c.ok(tag(`openai .parse() seed ${seed}: parsed matches the zod schema`), petOk(m.parsed) && r.choices[0].finish_reason === 'stop', m);
    }
  });

  await c.step(tag('ai generateObject'), async () => {
    const provider = createOpenAICompatible({ name: 'wick', baseURL: `${a.url}/v1`, supportsStructuredOutputs: true });
    const { object, finishReason } = await generateObject({
      model: provider.chatModel(model), schema: Pet, prompt: 'A pet, please.', maxOutputTokens: 200, temperature: 0, maxRetries: 0,
    });
    c.ok(tag('ai generateObject: the object matches the schema'), petOk(object), { object, finishReason });
  });

  await c.step(tag('langchain withStructuredOutput'), async () => {
    const llm = new ChatOpenAI({ model, apiKey: 'sk-test', configuration: { baseURL: `${a.url}/v1` }, maxTokens: 200, temperature: 0, maxRetries: 0 });
    const out = await llm.withStructuredOutput(Pet, { method: 'jsonSchema', name: 'pet' }).invoke('A pet, please.');
    c.ok(tag('langchain withStructuredOutput(jsonSchema): matches the schema'), petOk(out), out);
    const free = await llm.withStructuredOutput(Pet, { method: 'jsonMode' }).invoke('Answer in JSON.').catch((e) => e);
    // jsonMode asks for any JSON object: the answer parses (zod may then refuse its shape)
    c.ok(tag('langchain withStructuredOutput(jsonMode): JSON came back'), !(free instanceof Error) || /zod|schema|parse|Expected|invalid_type|Required/i.test(String(free.message)), String(free && free.message));
  });

  await c.step(tag('ollama chat with a schema'), async () => {
    const ol = new Ollama({ host: a.url });
    const r = await ol.chat({ model, messages: [{ role: 'user', content: 'A pet.' }], format: petSchema, stream: false, options: { temperature: 0, num_predict: 200 } });
    c.ok(tag('ollama chat format=schema: matches'), petOk(JSON.parse(r.message.content)), r.message.content);
  });
}

await c.step(tag('ollama generate format'), async () => {
  const ol = new Ollama({ host: a.url });
  const r = await ol.generate({ model, prompt: 'Once upon a time', format: petSchema, stream: false, options: { temperature: 0, num_predict: 200 } });
  c.ok(tag('ollama generate format=schema: matches'), petOk(JSON.parse(r.response)), r.response);
  const j = await ol.generate({ model, prompt: 'Once upon a time', format: 'json', stream: false, options: { temperature: 0.8, seed: 4, num_predict: 300 } });
  let parsed = null;
  try { parsed = JSON.parse(j.response); } catch { /* checked below */ }
  c.ok(tag('ollama generate format="json": an object, or cut by num_predict'), (parsed !== null && typeof parsed === 'object') || j.done_reason === 'length', j);
});

// ajv, seeds at temperature 1, on a schema with most supported keywords.
const richSchema = {
  $defs: { tag: { type: 'string', pattern: '^[a-z]{1,4}$' } },
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: -5, exclusiveMaximum: 50 },
    kind: { const: 'item' },
    level: { anyOf: [{ type: 'integer', minimum: 0, maximum: 3 }, { type: 'null' }] },
    tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 1, maxItems: 3 },
    pair: { type: 'array', prefixItems: [{ type: 'boolean' }, { enum: [1, 'two', null] }], items: false },
    note: { type: ['string', 'null'], maxLength: 5 },
    sub: { type: 'object', properties: { x: { type: 'integer', minimum: -99, maximum: 99 } }, required: ['x'], additionalProperties: false },
  },
  required: ['id', 'kind', 'level', 'tags', 'pair', 'note', 'sub'],
  additionalProperties: false,
};
await c.step(tag('ajv-validated samples'), async () => {
  const ajv = new Ajv2020({ strict: false });
  const validate = ajv.compile(richSchema);
  let complete = 0, valid = 0;
  const bad = [];
  const path = a.chat ? '/v1/chat/completions' : '/v1/completions';
  for (let seed = 0; seed < 16; seed++) {
    const body = { model, max_tokens: 250, temperature: 1, seed, response_format: { type: 'json_schema', json_schema: { name: 'rich', schema: richSchema, strict: true } } };
    if (a.chat) body.messages = [{ role: 'user', content: 'Give an item.' }]; else body.prompt = 'Once upon a time';
    const r = await post(path, body);
    const ch = r.body.choices && r.body.choices[0];
    if (!ch) { bad.push(r.body); continue; }
    const text = a.chat ? ch.message.content : ch.text;
    if (ch.finish_reason !== 'stop') continue;
    complete++;
    let o;
    try { o = JSON.parse(text); } catch { bad.push(text); continue; }
    if (validate(o)) valid++; else bad.push({ text, errors: validate.errors });
  }
  c.ok(tag(`ajv: every complete sample valid (${valid}/${complete})`), complete > 0 && valid === complete, bad.slice(0, 2));
  c.ok(tag('ajv: most samples complete within max_tokens'), complete >= 8, complete);
});

// the other spellings (completions route), greedy
await c.step(tag('spellings'), async () => {
  const base = a.chat ? { messages: [{ role: 'user', content: 'Answer.' }] } : { prompt: 'The answer is' };
  const path = a.chat ? '/v1/chat/completions' : '/v1/completions';
  const text = (r) => (a.chat ? r.body.choices[0].message.content : r.body.choices[0].text);
  const cases = [
    ['vLLM guided_choice', { guided_choice: ['yes', 'no'] }, (t) => t === 'yes' || t === 'no'],
    ['vLLM structured_outputs.choice', { structured_outputs: { choice: ['left', 'right'] } }, (t) => t === 'left' || t === 'right'],
    ['vLLM guided_regex', { guided_regex: '[0-9]{2}-[a-z]{2}' }, (t) => /^[0-9]{2}-[a-z]{2}$/.test(t)],
    ['vLLM structured_outputs.regex', { structured_outputs: { regex: '(ab|cd){2}' } }, (t) => /^(ab|cd){2}$/.test(t)],
    ['vLLM guided_json', { guided_json: petSchema }, (t) => petOk(JSON.parse(t))],
    ['vLLM structured_outputs.json', { structured_outputs: { json: petSchema } }, (t) => petOk(JSON.parse(t))],
    ['llama.cpp json_schema', { json_schema: petSchema }, (t) => petOk(JSON.parse(t))],
    ['llama.cpp grammar', { grammar: 'root ::= "x" [0-9] [0-9]? "!"' }, (t) => /^x[0-9][0-9]?!$/.test(t)],
    ['vLLM guided_grammar', { guided_grammar: 'root ::= ("on" | "off") " " [a-c]' }, (t) => /^(on|off) [a-c]$/.test(t)],
    ['OpenAI json_object', { response_format: { type: 'json_object' }, max_tokens: 300, temperature: 0.7, seed: 9 }, (t, r) => { try { return typeof JSON.parse(t) === 'object'; } catch { return r.body.choices[0].finish_reason === 'length'; } }],
  ];
  for (const [label, extra, ok] of cases) {
    const r = await post(path, { model, max_tokens: 120, temperature: 0, ...base, ...extra });
    let t = null, good = false;
    try { t = text(r); good = r.status === 200 && ok(t, r); } catch { good = false; }
    c.ok(tag(`${label}: output in the grammar`), good, r.status === 200 ? t : r.body);
  }
});

await c.step(tag('errors'), async () => {
  const base = a.chat ? { messages: [{ role: 'user', content: 'x' }] } : { prompt: 'x' };
  const path = a.chat ? '/v1/chat/completions' : '/v1/completions';
  const cases = [
    ['unsupported keyword names it and its path', { response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object', properties: { a: { type: 'string', not: { const: 'x' } } } } } } }, 'response_format', /not.*#\/properties\/a/],
    ['bad regex', { guided_regex: '(a' }, 'guided_regex', /./],
    ['bad GBNF', { grammar: 'root ::= undefined-rule' }, 'grammar', /undefined-rule/],
    ['two grammars', { guided_regex: 'a', guided_choice: ['b'] }, 'guided_choice', /give one/],
    ['guided_whitespace_pattern not supported', { guided_json: petSchema, guided_whitespace_pattern: '[ ]*' }, 'guided_whitespace_pattern', /./],
    ['unknown response_format type', { response_format: { type: 'xml' } }, 'response_format', /xml/],
    ['structured_outputs.structural_tag not supported', { structured_outputs: { structural_tag: '{}' } }, 'structured_outputs', /structural_tag/],
  ];
  for (const [label, extra, param, msg] of cases) {
    const r = await post(path, { model, max_tokens: 5, ...base, ...extra });
    const e = r.body.error || {};
    c.ok(tag(`400: ${label}`), r.status === 400 && e.param === param && msg.test(e.message || ''), r);
  }
  if (a.chat) {
    await c.throws(tag('openai client: a bad schema is a BadRequestError'), () => client.chat.completions.create({
      model, messages: [{ role: 'user', content: 'x' }], max_tokens: 5,
      response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object', propertyNames: { maxLength: 3 } } } },
    }), (e) => e.status === 400 && /propertyNames/.test(e.message), '400 naming propertyNames');
  }
  const ol = await post('/api/generate', { model, prompt: 'x', format: 'xml', stream: false });
  c.ok(tag('ollama format "xml": 400'), ol.status === 400 && /format/.test(JSON.stringify(ol.body)), ol);
});

c.done();
