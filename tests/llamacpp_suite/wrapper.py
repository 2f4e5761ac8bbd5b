#!/usr/bin/env python3
"""Stand in for llama-server in llama.cpp's server test suite.

The suite starts $LLAMA_SERVER_BIN_PATH with llama-server's command line.  This
wrapper receives that command line and execs the server under test:

  SUITE_TARGET_KIND=llama-server  the real llama-server ($SUITE_TARGET_BIN);
                                  only the model names change (see below)
  SUITE_TARGET_KIND=wick          `$SUITE_TARGET_BIN serve ...`; every flag that
                                  `wick serve --help` lists is passed through
                                  as is, the few llama-server flags wick spells
                                  differently are translated (--ctx-size N with
                                  --parallel P becomes -c N/P: llama-server's
                                  context is shared by its slots), the rest are
                                  dropped with one "dropped" line each on stderr
                                  (the test's captured output shows them)

In both modes --hf-repo/--hf-file/--model-url become --model with a local file
(modelmap.py).  A model this machine does not have ends the wrapper with a
message and exit status 77 before anything starts.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import modelmap  # noqa: E402

UNAVAILABLE = 77

# llama-server flags that take no value (the rest of the flags the suite uses
# take exactly one).  Unlisted flags take a value when the next word is not a
# flag.
BOOLEAN = {
    "--cont-batching", "-cb", "--no-cont-batching", "-nocb",
    "--embedding", "--embeddings", "--reranking", "--rerank",
    "--metrics", "--slots", "--no-slots", "--props",
    "--verbose", "-v", "--log-verbose",
    "--no-context-shift", "--context-shift", "--no-webui", "--jinja",
    "--no-jinja", "--flash-attn", "-fa", "--no-mmap", "--mlock",
    "--no-warmup", "--special", "-sp", "--no-prefill-assistant",
    "--kv-unified", "-kvu", "--no-kv-unified", "--swa-full",
    "--cache-reuse-off", "--no-cache-prompt", "--offline",
}

MODEL_FLAGS = {
    "--model": "model", "-m": "model",
    "--hf-repo": "hf_repo", "-hf": "hf_repo", "-hfr": "hf_repo",
    "--hf-file": "hf_file", "-hff": "hf_file",
    "--model-url": "url", "-mu": "url",
}

# llama-server spelling -> wick spelling, used only when wick's help does not
# list the llama-server spelling itself.  --draft is special: llama-server's
# --draft N is the number of drafted tokens, wick's --draft is a draft model.
WICK_RENAMES = {
    "--parallel": "-np",
    "--threads": "-t",
    "--verbose": "-v",
    "--model-draft": "--draft", "-md": "--draft",
    "--draft-n": "--draft-max", "--draft-max": "--draft-max",
}
ALWAYS_RENAMED = {"--draft": "--draft-max"}


def is_value(word):
    if not word.startswith("-"):
        return True
    try:
        float(word)
        return True
    except ValueError:
        return False


def parse(argv):
    """Split argv into [(flag, value or None)], keeping the order."""
    out = []
    i = 0
    while i < len(argv):
        flag = argv[i]
        value = None
        if "=" in flag and flag.startswith("--"):
            flag, value = flag.split("=", 1)
        elif flag not in BOOLEAN and i + 1 < len(argv) and is_value(argv[i + 1]):
            value = argv[i + 1]
            i += 1
        out.append((flag, value))
        i += 1
    return out


def fail(msg, status=UNAVAILABLE):
    sys.stderr.write("llamacpp_suite wrapper: %s\n" % msg)
    sys.stderr.flush()
    sys.exit(status)


def local_model(pairs):
    """Replace the model naming flags by one ("--model", path) pair."""
    named = {}
    rest = []
    for flag, value in pairs:
        key = MODEL_FLAGS.get(flag)
        if key:
            named[key] = value
        else:
            rest.append((flag, value))
    if named.get("model"):
        path = named["model"]
    elif named.get("url") or named.get("hf_repo"):
        path, why = modelmap.resolve(named.get("hf_repo"), named.get("hf_file"),
                                     named.get("url"))
        if path is None:
            fail(why)
    else:
        path = None
    return path, rest


def flatten(pairs):
    out = []
    for flag, value in pairs:
        out.append(flag)
        if value is not None:
            out.append(value)
    return out


def wick_flags(wick):
    """The flag names `wick serve --help` lists."""
    try:
        text = subprocess.run([wick, "serve", "--help"], capture_output=True,
                              text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        fail("cannot run %s serve --help: %s" % (wick, e), 1)
    return set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", text))


def alias_link(path, alias):
    """A symlink named ALIAS.gguf to PATH: wick names a model by its file."""
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                     "llamacpp_suite_alias.%d" % os.getuid(), str(os.getpid()))
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, alias + ".gguf")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.path.abspath(path), link)
    return link


def to_wick(wick, path, pairs):
    known = wick_flags(wick)
    args = []
    alias = None
    parallel = 1  # llama-server's default
    for flag, value in pairs:
        if flag in ("--parallel", "-np") and value:
            parallel = max(1, int(value))
    for flag, value in pairs:
        if flag in ALWAYS_RENAMED:
            args.append((ALWAYS_RENAMED[flag], value))
        elif flag in known:
            args.append((flag, value))
        elif flag in ("--alias", "-a"):
            alias = value
        elif flag in ("--ctx-size", "-c") and value and "-c" in known:
            # llama-server's context is shared by its slots; wick's -c is
            # the context of one sequence
            args.append(("-c", str(max(1, int(value) // parallel))))
        elif flag in WICK_RENAMES and WICK_RENAMES[flag] in known:
            args.append((WICK_RENAMES[flag], value))
        else:
            sys.stderr.write("llamacpp_suite wrapper: dropped %s%s (wick serve "
                             "has no such flag)\n" % (
                                 flag, "" if value is None else " " + value))
    # an older suite expects GET /slots off unless --slots is given
    if (os.environ.get("SUITE_SLOTS_OPT_IN") and "--no-slots" in known and
            not any(flag == "--slots" for flag, _ in pairs)):
        args.append(("--no-slots", None))
    # an older llama-server shifts the context unless told not to
    if (os.environ.get("SUITE_CTX_SHIFT_DEFAULT") and "--context-shift" in known and
            not any(flag in ("--context-shift", "--no-context-shift") for flag, _ in pairs)):
        args.append(("--context-shift", None))
    if path is not None:
        if alias:
            path = alias_link(path, alias)
        args.insert(0, ("--model", path))
    # extra wick flags for experiments, e.g. SUITE_WICK_ARGS="--allowed-origins *"
    # to answer every browser origin as llama-server does by default
    extra = os.environ.get("SUITE_WICK_ARGS", "").split()
    return [wick, "serve"] + flatten(args) + extra


def main():
    kind = os.environ.get("SUITE_TARGET_KIND", "wick")
    target = os.environ.get("SUITE_TARGET_BIN")
    if not target:
        fail("SUITE_TARGET_BIN is not set (the server binary to run)", 2)
    path, rest = local_model(parse(sys.argv[1:]))
    if kind == "llama-server":
        argv = [target] + (["--model", path] if path else []) + flatten(rest)
    elif kind == "wick":
        argv = to_wick(target, path, rest)
    else:
        fail("SUITE_TARGET_KIND must be wick or llama-server", 2)
    sys.stderr.write("llamacpp_suite wrapper: exec %s\n" % " ".join(argv))
    sys.stderr.flush()
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
