"""pytest plugin loaded (-p suite_plugin) into llama.cpp's server test suite.

Turns "this machine cannot get that model" into a skip with the reason,
instead of a 12-second start timeout or a download error:
- ServerProcess.start skips when the preset's model (hf repo/file or URL)
  has no local copy (modelmap.py);
- download_file skips when the file is not already in the suite's ./tmp;
- ServerPreset.load_all (newer trees start every preset once, before any
  test, to download its model) does nothing: there is nothing to download,
  and one unavailable preset would skip every test.
It changes nothing else in the suite.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import modelmap  # noqa: E402

import utils  # the suite's utils.py (run from the suite's tests folder)

_start = utils.ServerProcess.start


def _checked_start(self, *args, **kwargs):
    if not self.model_file and (self.model_url or self.model_hf_repo):
        path, why = modelmap.resolve(self.model_hf_repo, self.model_hf_file,
                                     self.model_url)
        if path is None:
            pytest.skip("model unavailable: " + why)
    return _start(self, *args, **kwargs)


def _offline_download(url, output_file_path=None):
    out = output_file_path or "./tmp/" + url.split("/").pop()
    if os.path.exists(out):
        return out
    pytest.skip("model unavailable: %s cannot be downloaded offline" % url)


utils.ServerProcess.start = _checked_start
utils.download_file = _offline_download
if hasattr(utils, "ServerPreset") and hasattr(utils.ServerPreset, "load_all"):
    utils.ServerPreset.load_all = staticmethod(lambda: None)
