#!/usr/bin/env python3
"""Checks the README's console examples against the real server, so they never go stale.

    scripts/check-readme.py [PATH_TO_TAKSI_SERVER]    # default: the debug build

Starts the server on the example screens (a free port in place of 8080, the repository's
config.json), runs every `$ curl ...` and `$ taksi-server validate ...` line of the README's
```console blocks, and compares the output with the lines under it. `...` in an expected line
stands for any text (the README shortens long payloads). A block preceded by the line
`<!-- readme-check: skip -->` is not run (output that depends on the moment, or on an edit).
Exits 1 and prints a diff for each example that does not match.
"""
import os
import re
import subprocess
import sys

from example_server import ROOT, binary_from, example_server


def examples(readme):
    """(line number, command, expected lines) for each checked command."""
    lines = readme.split("\n")
    found, in_block, skip, index = [], False, False, 0
    while index < len(lines):
        line = lines[index]
        if line.strip() == "<!-- readme-check: skip -->":
            skip = True
        elif line.startswith("```console"):
            in_block = True
        elif line.startswith("```") and in_block:
            in_block, skip = False, False
        elif in_block and not skip and line.startswith("$ "):
            command = re.sub(r"\s+#\s.*$", "", line[2:]).strip()
            expected = []
            while index + 1 < len(lines) and not lines[index + 1].startswith(("$ ", "```")):
                index += 1
                expected.append(lines[index])
            while expected and expected[-1] == "":
                expected.pop()
            if command.startswith(("curl ", "taksi-server validate")):
                found.append((index + 1 - len(expected), command, expected))
        index += 1
    return found


def matches(expected, actual):
    if len(expected) != len(actual):
        return False
    for want, got in zip(expected, actual):
        pattern = ".*".join(re.escape(part) for part in re.split(r" ?\.\.\.", want))
        if not re.fullmatch(pattern, got):
            return False
    return True


def main():
    binary = binary_from(sys.argv)
    with example_server(binary) as port:
        readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
        failures, checked = 0, 0
        for line, command, expected in examples(readme):
            shell = command.replace("localhost:8080", f"127.0.0.1:{port}")
            shell = re.sub(r"^taksi-server ", binary + " ", shell)
            result = subprocess.run(["bash", "-c", shell], cwd=ROOT, capture_output=True, text=True)
            actual = result.stdout.replace(f"127.0.0.1:{port}", "localhost:8080")
            actual = [row.rstrip("\r") for row in actual.rstrip("\n").split("\n")] if actual.strip() else []
            checked += 1
            if not matches(expected, actual):
                failures += 1
                print(f"README.md:{line}: $ {command}\n  expected:\n    " + "\n    ".join(expected)
                      + "\n  actual:\n    " + "\n    ".join(actual) + "\n")
        print(f"README examples: {checked - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
