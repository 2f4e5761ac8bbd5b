#!/usr/bin/env python3
"""Summarise a run of llama.cpp's server tests (one JUnit XML file per test
file, written by run.sh) as Markdown: a table per test file and the list of
failures and errors with the first line of each message.

usage: report.py OUT_DIR   (reads OUT_DIR/junit/*.xml and OUT_DIR/files.tsv)
"""

import os
import sys
import xml.etree.ElementTree as ET


def first_line(text):
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:240]
    return ""


def main():
    out = sys.argv[1]
    meta = {}
    tsv = os.path.join(out, "files.tsv")
    if os.path.exists(tsv):
        with open(tsv) as f:
            for line in f:
                name, rc, secs = line.rstrip("\n").split("\t")
                meta[name] = (int(rc), int(secs))
    rows, problems, skips = [], [], {}
    total = [0, 0, 0, 0]
    for name in sorted(meta):
        xml = os.path.join(out, "junit", name + ".xml")
        rc, secs = meta[name]
        if not os.path.exists(xml):
            note = "timed out" if rc in (124, 137) else "no result (exit %d)" % rc
            rows.append("| %s | - | - | - | - | %d | %s |" % (name, secs, note))
            continue
        counts = [0, 0, 0, 0]  # passed failed skipped errors
        for case in ET.parse(xml).getroot().iter("testcase"):
            test = "%s::%s" % (name, case.get("name"))
            kinds = {child.tag: child for child in case}
            if "error" in kinds:
                counts[3] += 1
                e = kinds["error"]
                problems.append((test, "error", first_line(e.get("message")) or first_line(e.text)))
            elif "failure" in kinds:
                counts[1] += 1
                e = kinds["failure"]
                problems.append((test, "failed", first_line(e.get("message")) or first_line(e.text)))
            elif "skipped" in kinds:
                counts[2] += 1
                why = first_line(kinds["skipped"].get("message"))
                skips[why] = skips.get(why, 0) + 1
            else:
                counts[0] += 1
        total = [a + b for a, b in zip(total, counts)]
        note = "file timed out" if rc in (124, 137) else ""
        rows.append("| %s | %d | %d | %d | %d | %d | %s |" % (name, *counts, secs, note))
    print("| test file | passed | failed | skipped | errors | seconds | note |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(r)
    print("| **total** | **%d** | **%d** | **%d** | **%d** | %d | |" % (
        *total, sum(s for _, s in meta.values())))
    print()
    print("## Skip reasons\n")
    for why, n in sorted(skips.items(), key=lambda kv: -kv[1]):
        print("- %d × %s" % (n, why))
    print()
    print("## Failures and errors\n")
    for test, kind, msg in problems:
        print("- `%s` (%s): %s" % (test, kind, msg.replace("|", "\\|")))


if __name__ == "__main__":
    main()
