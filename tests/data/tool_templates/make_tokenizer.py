#!/usr/bin/env python3
"""make_tokenizer.py FAMILY QWEN_DIR OUT_DIR — a tokenizer directory for a
scripted test model of another tool-calling family: the Qwen2.5 BPE files
(vocab.json, merges.txt linked) with the family's special tokens added and
its chat template (FAMILY.jinja beside this script)."""
import json, os, sys

FAMILIES = {
    'mistral': (['[INST]', '[/INST]', '[AVAILABLE_TOOLS]', '[/AVAILABLE_TOOLS]', '[TOOL_CALLS]',
                 '[TOOL_RESULTS]', '[/TOOL_RESULTS]', '</s>'], '</s>'),
    'llama3': (['<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>', '<|eom_id|>', '<|python_tag|>'],
               '<|eot_id|>'),
    'granite': (['<|start_of_role|>', '<|end_of_role|>', '<|end_of_text|>', '<|tool_call|>'], '<|end_of_text|>'),
}

family, qwen, out = sys.argv[1:4]
added, eos = FAMILIES[family]
os.makedirs(out, exist_ok=True)
for f in ('vocab.json', 'merges.txt'):
    dst = os.path.join(out, f)
    if not os.path.exists(dst):
        os.symlink(os.path.abspath(os.path.join(qwen, f)), dst)
cfg = json.load(open(os.path.join(qwen, 'tokenizer_config.json')))
dec = cfg['added_tokens_decoder']
nxt = max(int(k) for k in dec) + 1
for t in added:
    dec[str(nxt)] = {'content': t, 'lstrip': False, 'normalized': False, 'rstrip': False,
                     'single_word': False, 'special': True}
    nxt += 1
cfg['eos_token'] = eos
cfg['additional_special_tokens'] = added
here = os.path.dirname(os.path.abspath(__file__))
cfg['chat_template'] = open(os.path.join(here, family + '.jinja')).read()
json.dump(cfg, open(os.path.join(out, 'tokenizer_config.json'), 'w'), indent=1)
