// grammar_corpus_check.mjs — validates grammar_corpus's outputs with ajv (an
// independent validator; draft-04 schemas with ajv-draft-04, the rest with
// the 2020-12 or draft-07 validator, formats with ajv-formats):
//   node grammar_corpus_check.mjs OUT.jsonl     (run where ajv is installed)
// Prints the invalid outputs and a count; exits 1 when any output is invalid.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
const Ajv = require('ajv').default;
const Ajv2020 = require('ajv/dist/2020').default;
const AjvDraft4 = require('ajv-draft-04').default;
const addFormats = require('ajv-formats').default;
const mk = (C) => { const a = new C({ strict: false, allErrors: false, validateSchema: false }); addFormats(a); return a; };
const v7 = mk(Ajv), v2020 = mk(Ajv2020), v4 = mk(AjvDraft4);
const cache = new Map();
let n = 0, bad = 0, skipped = 0;
for (const line of readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line) continue;
  const { schema, text } = JSON.parse(line);
  let validate = cache.get(schema);
  if (validate === undefined) {
    const s = JSON.parse(readFileSync(schema, 'utf8'));
    const d = String(s.$schema || '');
    const ajv = d.includes('draft-04') ? v4 : d.includes('2020-12') || d.includes('2019-09') ? v2020 : v7;
    try { validate = ajv.compile(s); } catch (e) { validate = null; }
    cache.set(schema, validate);
  }
  if (!validate) { skipped++; continue; }
  n++;
  let value;
  try { value = JSON.parse(text); } catch { bad++; console.log(`NOT JSON ${schema}: ${text.slice(0, 200)}`); continue; }
  if (!validate(value)) { bad++; console.log(`INVALID ${schema}: ${JSON.stringify(validate.errors.slice(0, 2))} in ${text.slice(0, 300)}`); }
}
console.log(`${n} outputs checked, ${bad} invalid, ${skipped} whose schema ajv could not compile`);
process.exit(bad ? 1 : 0);
