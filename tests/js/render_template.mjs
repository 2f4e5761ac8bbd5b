// render_template.mjs — the reference side of tests/chat_template.test.sh:
// renders conversations with @huggingface/jinja (the Jinja engine of
// transformers.js), building the template variables the way `wick template`
// documents it (src/template/chat_template.h):
//   - the conversation's top-level keys pass through ({"messages": [...], "tools": ...});
//     a bare array is the messages;
//   - add_generation_prompt: false with --no-generation-prompt, else the
//     conversation's own value, else true;
//   - enable_thinking: set by --enable-thinking true|false, else the conversation's;
//   - bos_token / eos_token: tokenizer_config.json's (a string or {content}), when set;
//   - the template: tokenizer_config.json chat_template (a string, or a list of
//     {name, template}: "default", else the first).
// Usage: node render_template.mjs JOBS.jsonl
// Each line of JOBS is {"dir": tokenizer dir, "conversation": file, "args": [...], "out": file};
// the rendered text is written to "out" exactly (an error as "ERROR: message").
import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";

function configToken(cfg, key) {
  let v = cfg[key];
  if (v && typeof v === "object") v = v.content;
  return typeof v === "string" ? v : undefined;
}

function templateOf(cfg) {
  const t = cfg.chat_template;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    let pick;
    for (const it of t) {
      if (typeof it.template !== "string") continue;
      if (pick === undefined || it.name === "default") pick = it.template;
    }
    return pick;
  }
  return undefined;
}

const cache = new Map();
function loadDir(dir) {
  if (!cache.has(dir)) {
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
    cache.set(dir, { template: new Template(templateOf(cfg)), bos: configToken(cfg, "bos_token"), eos: configToken(cfg, "eos_token") });
  }
  return cache.get(dir);
}

function render(job) {
  const { template, bos, eos } = loadDir(job.dir);
  const conv = JSON.parse(fs.readFileSync(job.conversation, "utf8"));
  const ctx = Array.isArray(conv) ? { messages: conv } : { ...conv };
  const args = job.args || [];
  if (args.includes("--no-generation-prompt")) ctx.add_generation_prompt = false;
  else if (!("add_generation_prompt" in ctx)) ctx.add_generation_prompt = true;
  const et = args.indexOf("--enable-thinking");
  if (et >= 0) ctx.enable_thinking = args[et + 1] === "true";
  if (bos !== undefined) ctx.bos_token = bos;
  if (eos !== undefined) ctx.eos_token = eos;
  return template.render(ctx);
}

const lines = fs.readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.trim());
for (const line of lines) {
  const job = JSON.parse(line);
  let out;
  try {
    out = render(job);
  } catch (e) {
    out = `ERROR: ${e.message}`;
  }
  fs.writeFileSync(job.out, out);
}
