#!/usr/bin/env python3
"""Checks every page of the documentation against the real server, so none goes stale.

    scripts/check-docs.py [PATH_TO_TAKSI_SERVER]    # default: the debug build

For README.md and every docs/*.md page:

- **Console examples**: every `$ ` line of a ```console block is run, and its output compared with
  the lines under it. `...` in an expected line stands for any text (pages shorten long payloads).
  A block after the line `<!-- docs-check: skip -->` is not run (output that depends on the
  moment, on an edit, or on a machine); any other command than `curl`, `taksi-server` and `cd` in
  a checked block is an error, so nothing is shown as checked that is not.
- **Links**: every relative link goes to a file that exists, and every `#anchor` to a heading of
  that page.

Reference pages run against the example screens (a free port in place of 8080, the repository's
config.json). A page whose first lines hold `<!-- docs-check: tutorial -->` is followed as a reader
follows it, in a new empty folder: its commands run there in order (`taksi-server init`, `cd`), each
code block after a line `<!-- file: PATH -->` is written to PATH (after `<!-- append: PATH... -->`, added
to the end of each), and its `curl` lines ask a server
started in the current folder on what has been written so far (restarted after each file). At the
end of the tutorial, what `taksi-server codegen swift` writes for the shop must be the sample app's
Examples/ShopApp.swiftpm/Sources/ShopApp/Generated (`TAKSI_UPDATE_GOLDEN=1` rewrites it).
Exits 1 and prints a diff for each example that does not match, and each broken link.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from example_server import ROOT, binary_from, example_server, project_server

SKIP = "<!-- docs-check: skip -->"
TUTORIAL = "<!-- docs-check: tutorial -->"
FILE = re.compile(r"^<!-- (file|append): (\S+(?: \S+)*) -->$")


def pages():
    return ["README.md"] + sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def steps(text):
    """The page's steps in order: ("file" or "append", line, paths, content) and ("command", line, command, expected)."""
    lines = text.split("\n")
    found, index, skip, pending_file = [], 0, False, None
    while index < len(lines):
        line = lines[index]
        if line.strip() == SKIP:
            skip = True
        elif FILE.match(line.strip()):
            pending_file = FILE.match(line.strip()).groups()
        elif line.lstrip(" ").startswith("```"):
            # A block may be indented, inside a list item: its lines lose that indentation.
            opening = line.lstrip(" ")
            indent = len(line) - len(opening)
            fence, start = opening[: len(opening) - len(opening.lstrip("`"))], index
            body = []
            index += 1
            while index < len(lines) and not lines[index].lstrip(" ").startswith(fence):
                row = lines[index]
                body.append(row[min(indent, len(row) - len(row.lstrip(" "))):])
                index += 1
            if pending_file:
                found.append((pending_file[0], start + 1, pending_file[1].split(), "\n".join(body) + "\n"))
            elif opening.startswith("```console") and not skip:
                found += commands(body, start + 2)
            skip, pending_file = False, None
        elif line.strip():
            pending_file = None
        index += 1
    return found


def commands(body, first_line):
    found, index = [], 0
    while index < len(body):
        line = body[index]
        if line.startswith("$ "):
            command = re.sub(r"\s+#\s.*$", "", line[2:]).strip()
            expected = []
            while index + 1 < len(body) and not body[index + 1].startswith("$ "):
                index += 1
                expected.append(body[index])
            while expected and expected[-1] == "":
                expected.pop()
            found.append(("command", first_line + index - len(expected), command, expected))
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


def run(command, binary, port, cwd):
    """The command's standard output, as lines, with the port written back as 8080."""
    shell = command.replace("localhost:8080", f"127.0.0.1:{port}")
    shell = re.sub(r"(^|&& |\| )taksi-server ", lambda m: m.group(1) + shlex.quote(binary) + " ", shell)
    # As at a person's desk, not in CI: there `validate` checks the editor schema instead of
    # rewriting it (the tutorial shows the rewrite).
    desk = {key: value for key, value in os.environ.items() if key != "CI"}
    result = subprocess.run(["bash", "-c", shell], cwd=cwd, capture_output=True, text=True, env=desk)
    output = (result.stdout + (result.stderr if command.startswith("taksi-server") else "")).replace(f"127.0.0.1:{port}", "localhost:8080")
    return [row.rstrip("\r") for row in output.rstrip("\n").split("\n")] if output.strip() else []


def check_commands(page, found, binary, port, cwd):
    failures = 0
    for kind, line, command, expected in found:
        if kind != "command":
            continue
        if command == "taksi-server" or command.startswith("taksi-server serve"):
            continue  # the check's own server stands for it
        if not command.startswith(("curl ", "taksi-server ")):
            print(f"{page}:{line}: $ {command}\n  not a command the check runs (curl, taksi-server); mark the block {SKIP}\n")
            failures += 1
            continue
        actual = run(command, binary, port, cwd)
        if not matches(expected, actual):
            failures += 1
            print(f"{page}:{line}: $ {command}\n  expected:\n    " + "\n    ".join(expected) + "\n  actual:\n    " + "\n    ".join(actual) + "\n")
    return failures


def check_tutorial(page, found, binary):
    """Follows the page in a new folder, as a reader does."""
    failures = 0
    folder = tempfile.mkdtemp(prefix="taksi-tutorial-")
    cwd, server, changed, port = folder, None, True, 0
    try:
        for kind, line, first, second in found:
            if kind in ("file", "append"):
                for relative in first:
                    path = os.path.normpath(os.path.join(cwd, relative))
                    if kind == "append" and not os.path.exists(path):
                        print(f"{page}:{line}: appends to {relative}, which no earlier step wrote")
                        failures += 1
                        continue
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "w" if kind == "file" else "a", encoding="utf-8") as handle:
                        handle.write(second)
                changed = True
                continue
            command = first
            if command.startswith("cd "):
                cwd = os.path.normpath(os.path.join(cwd, command[3:].strip()))
                continue
            if command.startswith("curl ") and changed:
                if server:
                    server.__exit__(None, None, None)
                server = project_server(binary, cwd)
                port = server.__enter__()
                changed = False
            failures += check_commands(page, [(kind, line, command, second)], binary, port, cwd)
            if command.startswith("taksi-server init"):
                changed = True
        failures += check_sample_app(page, binary, cwd)
    finally:
        if server:
            server.__exit__(None, None, None)
        shutil.rmtree(folder, ignore_errors=True)
    return failures


SAMPLE_APP = os.path.join(ROOT, "Examples", "ShopApp.swiftpm", "Sources", "ShopApp", "Generated")


def check_sample_app(page, binary, project):
    """The sample app shows the tutorial's shop: its generated classes are the shop's, as written now."""
    written = tempfile.mkdtemp(prefix="taksi-codegen-")
    try:
        result = subprocess.run([binary, "codegen", "swift", "--out", written], cwd=project, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{page}: codegen swift failed in the tutorial's project:\n{result.stdout}{result.stderr}")
            return 1
        if os.environ.get("TAKSI_UPDATE_GOLDEN") == "1":
            shutil.rmtree(SAMPLE_APP, ignore_errors=True)
            shutil.copytree(written, SAMPLE_APP)
            return 0
        expected = sorted(os.listdir(SAMPLE_APP)) if os.path.isdir(SAMPLE_APP) else []
        if sorted(os.listdir(written)) != expected:
            print(f"{page}: codegen writes {sorted(os.listdir(written))} for the shop; the sample app has {expected} (TAKSI_UPDATE_GOLDEN=1 rewrites them)")
            return 1
        failures = 0
        for name in expected:
            with open(os.path.join(written, name), encoding="utf-8") as new, open(os.path.join(SAMPLE_APP, name), encoding="utf-8") as kept:
                if new.read() != kept.read():
                    print(f"{page}: Examples/ShopApp.swiftpm/Sources/ShopApp/Generated/{name} is not what codegen writes for the shop (TAKSI_UPDATE_GOLDEN=1 rewrites it)")
                    failures += 1
        return failures
    finally:
        shutil.rmtree(written, ignore_errors=True)


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    found, code = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            code = not code
        elif not code and re.match(r"#{1,6} ", line):
            found.add(slug(line.lstrip("#")))
    return found


def check_links(page, text):
    failures = 0
    text_without_code = re.sub(r"```.*?```", "", text, flags=re.S)
    text_without_code = re.sub(r"`[^`\n]*`", "", text_without_code)
    for target in re.findall(r"\]\(([^)\s]+)\)", text_without_code):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path)) if path else os.path.join(ROOT, page)
        if not os.path.exists(full):
            print(f"{page}: link to {target}: no such file")
            failures += 1
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            print(f"{page}: link to {target}: no heading #{anchor} in {os.path.relpath(full, ROOT)}")
            failures += 1
    return failures


def main():
    binary = os.path.abspath(binary_from(sys.argv))
    failures, checked = 0, 0
    with example_server(binary) as port:
        for page in pages():
            text = open(os.path.join(ROOT, page), encoding="utf-8").read()
            found = steps(text)
            checked += sum(1 for step in found if step[0] == "command" and not step[2].startswith(("cd ", "taksi-server serve")))
            if TUTORIAL in text.split("\n", 3)[:3]:
                failures += check_tutorial(page, found, binary)
            else:
                failures += check_commands(page, found, binary, port, ROOT)
            failures += check_links(page, text)
    print(f"docs examples: {checked} commands in {len(pages())} pages; {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
