#!/usr/bin/env python3
"""Fails on a compiler warning about our own code in a build's output.

    swift build --build-tests 2>&1 | tee build.log; python3 scripts/check-warnings.py build.log

A warning counts as ours when its file is under Sources/, Tests/, Plugins/ or docs/ (the snippets
the docs show are compiled), or is Package.swift, of this repository; and when it is in a macro's
expansion (`#expect`, say) whose code originates in one of those. Dependencies' warnings are theirs
to fix. Prints each of ours once, with where it is, and exits 1 when there is any.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/"
OURS = [ROOT + place for place in ("Sources/", "Tests/", "Plugins/", "docs/", "Examples/", "Package.swift")]
WARNING = re.compile(r"^(?P<where>.+?):\d+:\d+: warning: (?P<what>.*)$")
ORIGIN = re.compile(r"`- (?P<where>/\S+?:\d+:\d+): note: expanded code originates here")


def ours(path):
    return any(path.startswith(place) for place in OURS)


def main():
    lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
    found = []
    for index, line in enumerate(lines):
        match = WARNING.match(line)
        if not match:
            continue
        if ours(match.group("where")):
            found.append(line)
        elif match.group("where").startswith("macro expansion") and index + 1 < len(lines):
            origin = ORIGIN.search(lines[index + 1])
            if origin and ours(origin.group("where")):
                found.append(f"{origin.group('where')}: warning (in a macro's expansion): {match.group('what')}")
    found = sorted(set(found))
    if found:
        print("the build warns about our own code; fix each warning:", file=sys.stderr)
        for line in found:
            print(line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
