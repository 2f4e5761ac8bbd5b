"""Where the models llama.cpp's server tests ask for live on this machine.

The suite names its models by Hugging Face repository and file (--hf-repo /
--hf-file) or by URL (--model-url); this machine cannot download anything, so
each name is mapped to a file under the shared fixtures folder, or reported as
unavailable with a reason.  Used by the wrapper (to rewrite the command line)
and by the pytest plugin (to skip a test before starting a server that cannot
load its model).
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def shared_dir():
    """The fixtures folder: $WICK_SHARED, else ../shared beside the checkout."""
    env = os.environ.get("WICK_SHARED")
    if env:
        return env
    return os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))


# (hf repo, hf file) -> path under the shared folder.  stories260K is the
# suite's default preset (ggml-org/models tinyllamas/stories260K.gguf): the
# same trained llama2.c model, stored as F32 GGUF.
HF_FILES = {
    ("ggml-org/models", "tinyllamas/stories260K.gguf"):
        "models/stories260K/stories260K-f32.gguf",
}

# Newer trees' default preset, ggml-org/test-model-stories260K: the same
# weights (llama-server draws the suite's expected texts from them) with a
# training context above stories260K's 128 positions (the suite expects 256
# per slot, which llama-server would cap at 128).  run.sh makes that copy,
# with llama.context_length 2048, and names it in $SUITE_STORIES_LONG_CTX.
LONG_CTX_REPO = "ggml-org/test-model-stories260K"

# URLs the suite downloads with download_file() or passes as --model-url.
URLS = {}


def resolve(hf_repo=None, hf_file=None, url=None):
    """Return (path, None) for a model this machine has, else (None, reason)."""
    if url:
        rel = URLS.get(url)
        if rel is None:
            return None, "model URL %s is not available offline" % url
    elif hf_repo == LONG_CTX_REPO and not hf_file:
        path = os.environ.get("SUITE_STORIES_LONG_CTX")
        if not path or not os.path.isfile(path):
            return None, "%s: the long-context copy of stories260K was not made (run.sh makes it)" % hf_repo
        return path, None
    elif hf_repo:
        rel = HF_FILES.get((hf_repo, hf_file))
        if rel is None:
            return None, "model %s%s is not available offline" % (
                hf_repo, (" / " + hf_file) if hf_file else "")
    else:
        return None, "no model named"
    path = os.path.join(shared_dir(), rel)
    if not os.path.isfile(path):
        return None, "fixture %s is absent" % path
    return path, None
