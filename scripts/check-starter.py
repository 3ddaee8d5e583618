#!/usr/bin/env python3
"""Runs the CI workflow `taksi-server init` writes, step by step, as GitHub Actions would on a push
and on a pull request, against a local clone of this repository: a broken reference (a tag, a
release file, a script path) fails here, not on a team's first push.

    python3 scripts/check-starter.py BINARY DIST [--build]

BINARY is the taksi-server to run `init` with; DIST the folder scripts/release.sh wrote the release
tarball and its checksum into. The scenarios:

1. the version is released (DIST served as the release's downloads): the server is downloaded,
   checked against its checksum and installed; `validate` passes; a pull request then finds it in
   the cache under the same key and runs `compat` against the base branch; run as root, each
   checkout is owned by another user, as in a `container:` job; a pull request whose editor schema
   lags its components fails; a key step whose install script fails fails the job;
2. a tarball that does not match its checksum is refused, and nothing is installed;
3. an unreleased version builds the pinned commit (the one the binary running init was built
   from), or, with none, the tag v<version> in the server's repository;
4. the image's layout (its COPY and taksi-server RUN lines, with the build argument CONFIG) is
   built and started: with config.json; refused with a file: upstream; with production.json, it
   stops without the credential its configuration names and starts with it;
5. --upgrade pins a newer commit of the server's repository, printing the CHANGELOG's lines added
   since the pin;
6. with --build, nothing is published: the workflow builds the server from the local clone (the
   pinned commit when the binary names one; a release build, about 10 minutes on two cores) and
   `validate` passes with it.

The `uses:` steps are played as GitHub runs them: checkout is the clone of the pushed project, the
cache restores what an earlier run of the same key saved. `run:` steps run in bash with -eo pipefail,
as GitHub's default shell does.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml


def fail(message):
    print(f"check-starter: {message}", file=sys.stderr)
    sys.exit(1)


class StepFailed(Exception):
    """A `run:` step exited non-zero: the job fails there, as on GitHub."""

    def __init__(self, index, log):
        super().__init__(f"step {index} failed")
        self.index = index
        self.log = log


def run(command, cwd=None, env=None, check=True):
    result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and result.returncode != 0:
        fail(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}")
    return result


class Runner:
    """Plays one job of a workflow the way GitHub Actions does, for the expressions it uses."""

    def __init__(self, workflow, checkout, env, cache):
        self.workflow = workflow
        self.checkout = checkout
        self.env = env
        self.cache = cache  # key -> bytes of the cached file, shared between runs
        self.outputs = {}
        self.extra_path = []
        self.log = []

    def expression(self, text):
        text = text.strip()
        match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", text)
        if match:
            return self.outputs.get(match.group(1), {}).get(match.group(2), "")
        if text == "runner.os":
            return "Linux"
        if text == "runner.arch":
            return "X64"
        if text == "github.event_name":
            return self.env["GITHUB_EVENT_NAME"]
        match = re.fullmatch(r"env\.(\w+)", text)
        if match:
            return self.env.get(match.group(1), "")
        fail(f"the workflow uses an expression this check does not know: {text}")

    def substitute(self, text):
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.expression(m.group(1)), text)

    def condition(self, text):
        if text is None:
            return True
        match = re.fullmatch(r"\s*(.+?)\s*(==|!=)\s*'([^']*)'\s*", text)
        if not match:
            fail(f"the workflow has a condition this check does not know: {text}")
        left = self.expression(match.group(1))
        return (left == match.group(3)) == (match.group(2) == "==")

    def home_path(self, path):
        return self.env["HOME"] + path[1:] if path.startswith("~/") else path

    def play(self):
        job = self.workflow["jobs"]["validate"]
        saves = []
        for index, step in enumerate(job["steps"]):
            if not self.condition(step.get("if")):
                self.log.append(f"step {index} skipped")
                continue
            uses = step.get("uses")
            if uses is not None:
                settings = step.get("with", {})
                if uses.startswith("actions/checkout@"):
                    if settings.get("fetch-depth") != 0:
                        fail("the checkout must fetch the whole history (fetch-depth: 0), for compat's base branch")
                elif uses.startswith("actions/cache@"):
                    key = self.substitute(settings["key"])
                    path = self.home_path(settings["path"])
                    hit = key in self.cache
                    if hit:
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                        with open(path, "wb") as file:
                            file.write(self.cache[key])
                        os.chmod(path, 0o755)
                    else:
                        saves.append((key, path))
                    self.outputs[step["id"]] = {"cache-hit": "true" if hit else "false"}
                    self.log.append(f"cache {'hit' if hit else 'miss'}: {key}")
                else:
                    fail(f"the workflow uses {uses}, which this check does not play")
                continue
            output_file = os.path.join(self.env["RUNNER_TEMP"], f"output-{index}")
            path_file = os.path.join(self.env["RUNNER_TEMP"], f"path-{index}")
            open(output_file, "w").close()
            open(path_file, "w").close()
            env = dict(self.env, GITHUB_OUTPUT=output_file, GITHUB_PATH=path_file)
            env["PATH"] = ":".join(self.extra_path + [self.env["PATH"]])
            command = self.substitute(step["run"])
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
                cwd=self.checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            self.log.append(f"$ {command.strip()}\n{result.stdout.rstrip()}")
            if result.returncode != 0:
                raise StepFailed(index, "\n".join(self.log))
            if "id" in step:
                values = {}
                for line in open(output_file).read().splitlines():
                    name, _, value = line.partition("=")
                    values[name] = value
                self.outputs[step["id"]] = values
            self.extra_path = [line for line in open(path_file).read().splitlines() if line] + self.extra_path
        # Post-job: the cache saves what a missed key installed.
        for key, path in saves:
            if not os.path.isfile(path):
                fail(f"the cache's path {path} holds nothing after the job")
            with open(path, "rb") as file:
                self.cache[key] = file.read()
        return "\n".join(self.log)


def play(runner):
    """The job's log; a failed step fails the check, with the log."""
    try:
        return runner.play()
    except StepFailed as failure:
        fail(f"{failure}:\n{failure.log}")


def unpinned(script):
    """The install script's text with no commit pinned (what init writes from a build that names none)."""
    return re.sub(r"^commit=\$\{TAKSI_SERVER_COMMIT:-[0-9a-f]*\}$", "commit=${TAKSI_SERVER_COMMIT:-}", script, flags=re.M)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def image_layout(project, binary, work, build_args=None):
    """Builds the starter image's layout as `docker build` would, under a folder standing for the
    image's root: each stage's ARG (a build argument over its default) and COPY, and each RUN of
    taksi-server (the install's RUN is the release this check installs, `binary`). Returns the
    WORKDIR and the command its ENTRYPOINT and CMD start (paths under the root, `binary` for
    taksi-server) in its WORKDIR, or raises StepFailed with what the failing RUN printed."""
    root = tempfile.mkdtemp(dir=work)
    text = open(os.path.join(project, "Dockerfile")).read().replace("\\\n", " ")
    arguments, entrypoint, command, workdir = {}, [], [], root

    def inside(text):
        text = re.sub(r"\$\{(\w+)\}", lambda m: arguments.get(m.group(1), ""), text)
        return re.sub(r"(?<![\w/])/app\b", root + "/app", text)

    for line in text.splitlines():
        instruction, _, rest = line.strip().partition(" ")
        if instruction == "ARG":
            name, _, default = rest.partition("=")
            arguments[name] = (build_args or {}).get(name, default)
        elif instruction == "COPY" and not rest.startswith("--from="):
            source, destination = inside(rest).split()
            if source.startswith("scripts/"):
                continue  # the install script, played by the install itself
            source = os.path.join(project, source)
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            if os.path.isdir(source):
                shutil.copytree(source, destination)
            else:
                shutil.copy(source, destination)
        elif instruction == "RUN" and re.search(r"(^|&& )taksi-server ", rest):
            shell = re.sub(r"(^|&& )taksi-server ", lambda m: m.group(1) + binary + " ", inside(rest))
            result = subprocess.run(["bash", "-c", shell], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                raise StepFailed(f"RUN {rest}", result.stdout)
        elif instruction == "WORKDIR":
            workdir = inside(rest)
        elif instruction == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif instruction == "CMD":
            command = json.loads(rest)
    started = [binary if part == "taksi-server" else inside(part) for part in entrypoint + command]
    return workdir, started


def start_image(layout, env, port):
    """Starts the image's command (``image_layout``'s) on `port`; returns the process and whether
    /healthz answered 200 (False when it exited first). Its output is in process.stdout once it
    has ended."""
    workdir, started = layout
    process = subprocess.Popen(
        started + ["--port", str(port)], cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120  # a hang guard
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
                return process, answer.status == 200
        except OSError:
            time.sleep(0.2)
    return process, False


def stop(process):
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    return process.returncode, output


def main():
    if len(sys.argv) < 3:
        fail("usage: check-starter.py BINARY DIST [--build]")
    binary, dist = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    build = "--build" in sys.argv[3:]
    repository_root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    release = json.loads(run([binary, "version", "--json"]).stdout)
    version, tarball = release["version"], release["tarball"]
    for name in (tarball, tarball + ".sha256"):
        if not os.path.isfile(os.path.join(dist, name)):
            fail(f"{dist} has no {name}: run scripts/release.sh first")

    work = tempfile.mkdtemp(prefix="taksi-starter-")
    try:
        git = dict(os.environ, GIT_AUTHOR_NAME="Starter", GIT_AUTHOR_EMAIL="starter@example.com",
                   GIT_COMMITTER_NAME="Starter", GIT_COMMITTER_EMAIL="starter@example.com")
        # The team's project, pushed to its repository.
        project = os.path.join(work, "app")
        print(run([binary, "init", project]).stdout.rstrip())
        run(["git", "init", "--quiet", "--initial-branch", "main"], cwd=project)
        run(["git", "add", "--all"], cwd=project)
        run(["git", "commit", "--quiet", "-m", "taksi-server init"], cwd=project, env=git)
        origin = os.path.join(work, "app.git")
        run(["git", "clone", "--quiet", "--bare", project, origin])
        # This repository, as the server's source: a local clone of it.
        server = os.path.join(work, "taksi-server.git")
        run(["git", "clone", "--quiet", "--bare", "--no-local", repository_root, server])
        head = run(["git", "rev-parse", "HEAD"], cwd=server).stdout.strip()

        workflow_path = os.path.join(project, ".github/workflows/screens.yml")
        workflow = yaml.safe_load(open(workflow_path))
        # The install script names the version and where it comes from, as the release does.
        script = open(os.path.join(project, "scripts/install-taksi-server.sh")).read()
        if f"version=${{TAKSI_SERVER_VERSION:-{version}}}" not in script:
            fail(f"the install script does not name version {version}")
        # Pinned to the commit the binary was built from, when it names one (a release build of a clean clone).
        commit = release.get("commit")
        if f"commit=${{TAKSI_SERVER_COMMIT:-{commit or ''}}}\n" not in script:
            fail(f"the install script should pin {commit or 'no commit'}")
        print(f"the project is pinned to {commit}" if commit else
              "not pinned: this binary names no commit (scripts/install.sh and release.sh build it in from a clean clone)")
        if f"repository=${{TAKSI_SERVER_REPOSITORY:-{release['repository']}}}" not in script:
            fail("the install script names another repository than the release does")
        if release["downloads"] != f"{release['repository']}/releases/download/{release['tag']}" or "$repository/releases/download" not in script:
            fail("the install script and the release disagree on where downloads are")

        # The starter's Dockerfile names only images this repository's own Dockerfile builds on.
        ours = set(re.findall(r"^FROM (\S+)", open(os.path.join(repository_root, "Dockerfile")).read(), re.M))
        theirs = set(re.findall(r"^FROM (\S+)", open(os.path.join(project, "Dockerfile")).read(), re.M))
        if not theirs <= ours:
            fail(f"the starter's Dockerfile builds on {sorted(theirs - ours)}, which this repository's does not")
        dockerfile = open(os.path.join(project, "Dockerfile")).read()
        defaults = dict(re.findall(r"^ARG (\w+)=(\S+)", dockerfile, re.M))
        for copied in re.findall(r"^COPY (?!--from)(\S+)", dockerfile, re.M):
            copied = re.sub(r"\$\{(\w+)\}", lambda m: defaults.get(m.group(1), ""), copied)
            if not os.path.exists(os.path.join(project, copied)):
                fail(f"the starter's Dockerfile copies {copied}, which init does not write")

        def environment(releases, event, home):
            os.makedirs(home, exist_ok=True)
            temp = tempfile.mkdtemp(dir=work)
            env = {key: value for key, value in os.environ.items() if not key.startswith("TAKSI_")}
            env.update({str(k): str(v) for k, v in workflow.get("env", {}).items()})
            env.update({
                "TAKSI_SERVER_REPOSITORY": "file://" + server, "TAKSI_SERVER_RELEASES": "file://" + releases,
                "HOME": home, "RUNNER_TEMP": temp, "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event,
            })
            if event == "pull_request":
                env["GITHUB_BASE_REF"] = "main"
            return env

        # The job runs in a container as root over a checkout the runner's user owns: played so
        # when this runs as root (git refuses such a repository unless told it is safe).
        owner = "nobody" if os.geteuid() == 0 else None

        def clone(branch):
            folder = tempfile.mkdtemp(dir=work)
            run(["git", "clone", "--quiet", "--branch", branch, origin, folder])
            return folder

        def checkout(branch):
            """The job's checkout of `branch`."""
            folder = clone(branch)
            if owner:
                run(["chown", "-R", owner, folder])
            return folder

        def push(branch, change, message):
            """A team member's branch off main with `change(folder)` made, pushed."""
            folder = clone("main")
            run(["git", "checkout", "--quiet", "-b", branch], cwd=folder)
            change(folder)
            run(["git", "add", "--all"], cwd=folder)
            run(["git", "commit", "--quiet", "-m", message], cwd=folder, env=git)
            run(["git", "push", "--quiet", "origin", branch], cwd=folder)

        # 1. Released: downloaded and installed once, then restored from the cache.
        releases = os.path.join(work, "releases")
        os.makedirs(os.path.join(releases, release["tag"]))
        for name in (tarball, tarball + ".sha256"):
            shutil.copy(os.path.join(dist, name), os.path.join(releases, release["tag"], name))
        cache = {}
        log = play(Runner(workflow, checkout("main"), environment(releases, "push", os.path.join(work, "home-1")), cache))
        print(log)
        if "installed the release tarball" not in log or "1 screen is valid" not in log:
            fail("the push did not install the release and validate the screen")
        if len(cache) != 1 or not next(iter(cache)).startswith(f"taksi-server-release-{version}-"):
            fail(f"the cache should hold the release under its checksum, holds {list(cache)}")
        # A pull request adding a screen: the server from the cache, compat against main.
        def second_screen(folder):
            home = open(os.path.join(folder, "Screens/home.yaml")).read()
            with open(os.path.join(folder, "Screens/more.yaml"), "w") as file:
                file.write(home.replace("name: home", "name: more").replace("entry: true", "entry: false"))

        push("more", second_screen, "a second screen")
        log = play(Runner(workflow, checkout("more"), environment(releases, "pull_request", os.path.join(work, "home-2")), cache))
        print(log)
        if "cache hit" not in log or "install-taksi-server: installed" in log:
            fail("the pull request should have found the server in the cache")
        if "2 screens are valid" not in log or "catalog change" not in log:
            fail("the pull request did not validate both screens and run compat")
        print(f"the pull request's compat read a checkout owned by {owner}" if owner else
              "a checkout owned by another user: not played (run as root to play it)")

        # A pull request whose component gained a field, with its schemas/ not brought up to date:
        # CI refuses it (it does not rewrite the checkout and pass).
        def badge(folder):
            component = os.path.join(folder, "Screens/components/card_component.json")
            card = json.load(open(component))
            card["fields"].append({"name": "badge", "type": "string", "required": False, "dynamic": True, "summary": "A badge."})
            with open(component, "w") as file:
                json.dump(card, file, indent=2)

        push("stale", badge, "a badge on cards")
        stale = checkout("stale")
        try:
            play_log = Runner(workflow, stale, environment(releases, "pull_request", os.path.join(work, "home-5")), cache).play()
            fail(f"a stale schemas/screen.schema.json passed CI:\n{play_log}")
        except StepFailed as failure:
            if "is out of date (the components changed); run `taksi-server validate`" not in failure.log:
                fail(f"a stale schema failed CI without saying how to update it:\n{failure.log}")
        if "badge" in open(os.path.join(stale, "schemas/screen.schema.json")).read():
            fail("CI rewrote the checkout's schema")
        print("a stale editor schema fails CI, naming the command that updates it")

        # The key step fails the job when the install script cannot say what it would install
        # (no release, no pin, no reachable source), instead of caching under an empty key. (A
        # pinned script names its commit without asking the repository: its key cannot fail.)
        def unpin(folder):
            path = os.path.join(folder, "scripts/install-taksi-server.sh")
            text = open(path).read()
            with open(path, "w") as file:
                file.write(unpinned(text))

        if commit:
            push("unpinned", unpin, "no pin")
        unreachable = environment(os.path.join(work, "no-such-releases"), "push", os.path.join(work, "home-6"))
        unreachable["TAKSI_SERVER_REPOSITORY"] = "file://" + os.path.join(work, "no-such-repository.git")
        key_step = next(index for index, step in enumerate(workflow["jobs"]["validate"]["steps"]) if step.get("id") == "server-source")
        try:
            play_log = Runner(workflow, checkout("unpinned" if commit else "main"), unreachable, dict(cache)).play()
            fail(f"the job passed with an install script that cannot name its server:\n{play_log}")
        except StepFailed as failure:
            # There, not later: a key step that passed would have the cache looked up under an empty key.
            if failure.index != key_step or "nor a default branch" not in failure.log:
                fail(f"the key step (step {key_step}) should fail, with the install script's reason; {failure}:\n{failure.log}")
        print("a key step whose script fails fails the job")

        # 2. A tarball that is not what its checksum says is refused.
        tampered = os.path.join(work, "tampered")
        shutil.copytree(releases, tampered)
        with open(os.path.join(tampered, release["tag"], tarball), "ab") as file:
            file.write(b"\0")
        env = environment(tampered, "push", os.path.join(work, "home-3"))
        result = run(["bash", os.path.join(project, "scripts/install-taksi-server.sh")], env=env, check=False)
        if result.returncode == 0 or "nothing installed" not in result.stdout:
            fail(f"a tarball that does not match its checksum was installed:\n{result.stdout}")
        if os.path.exists(os.path.join(work, "home-3/.local/bin/taksi-server")):
            fail("a tarball that does not match its checksum left a binary")
        print(f"a tampered tarball is refused: {result.stdout.strip().splitlines()[-1]}")

        # 3. Unreleased: the source is the pinned commit; without a pin, the tag when there is one,
        # else the default branch.
        empty = os.path.join(work, "no-releases")
        os.makedirs(empty)
        env = environment(empty, "push", os.path.join(work, "home-4"))
        installer = os.path.join(project, "scripts/install-taksi-server.sh")
        if commit:
            pinned_id = run(["bash", installer, "--source-id"], env=env).stdout.strip()
            if pinned_id != f"source-{commit}":
                fail(f"unreleased, the source id should be the pinned commit {commit}, is {pinned_id}")
            print(f"unreleased and pinned: builds {pinned_id}")
            # The same script with no pin, for what follows.
            installer = os.path.join(work, "install-unpinned.sh")
            with open(installer, "w") as file:
                file.write(unpinned(script))
        source_id = run(["bash", installer, "--source-id"], env=env).stdout.strip()
        tagged = run(["git", "tag", "--list", release["tag"]], cwd=server).stdout.strip() != ""
        tagged_commit = run(["git", "rev-parse", release["tag"] + "^{commit}"], cwd=server).stdout.strip() if tagged else head
        if source_id != f"source-{tagged_commit}":
            fail(f"unreleased, the source id should be the {'tag' if tagged else 'default branch'}'s commit, is {source_id}")
        if not tagged:
            scratch = os.path.join(work, "tagged.git")
            run(["git", "clone", "--quiet", "--bare", server, scratch])
            run(["git", "tag", "-a", "-m", "release", release["tag"], "HEAD~1"], cwd=scratch, env=git)
            tag_commit = run(["git", "rev-parse", "HEAD~1"], cwd=scratch).stdout.strip()
            env_tagged = dict(env, TAKSI_SERVER_REPOSITORY="file://" + scratch)
            tag_id = run(["bash", installer, "--source-id"], env=env_tagged).stdout.strip()
            if tag_id != f"source-{tag_commit}":
                fail(f"with an annotated tag {release['tag']}, the source id should be its commit {tag_commit}, is {tag_id}")
            print(f"unreleased: builds {source_id}; once tagged, the tag's commit")

        # 4. The image: its layout built from the project and started, as `docker build` and
        # `docker run` would (the install played by the release above).
        desk = {key: value for key, value in os.environ.items() if not key.startswith("TAKSI_") and key != "CI"}
        port = free_port()
        process, healthy = start_image(image_layout(project, binary, work), desk, port)
        home = urllib.request.urlopen(f"http://127.0.0.1:{port}/screens/home", timeout=10).status if healthy else None
        status, output = stop(process)
        if not healthy or home != 200 or status != 0:
            fail(f"the image with config.json did not start and answer (health {healthy}, home {home}, exit {status}):\n{output}")
        # The tutorial's way: a development config.json with a file: upstream, a production.json
        # naming the API and its credential's variable.
        with open(os.path.join(project, "production.json"), "w") as file:
            json.dump({"screens": "Screens", "upstreams": {"shop": {
                "url": "https://shop.example.com/api", "auth": {"bearer": {"env": "SHOP_TOKEN"}}}}}, file)
        config = json.load(open(os.path.join(project, "config.json")))
        config["upstreams"] = {"shop": "file:answers"}
        with open(os.path.join(project, "config.json"), "w") as file:
            json.dump(config, file)
        os.makedirs(os.path.join(project, "answers"), exist_ok=True)
        try:
            image_layout(project, binary, work)
            fail("the image was built with a configuration whose upstream answers from files")
        except StepFailed as failure:
            if "--build-arg CONFIG=production.json" not in failure.log:
                fail(f"a file: upstream failed the build without saying which configuration to ship:\n{failure.log}")
        production = image_layout(project, binary, work, {"CONFIG": "production.json"})
        process, healthy = start_image(production, desk, free_port())
        status, output = stop(process) if healthy else (process.wait(timeout=60), process.stdout.read())
        if healthy or "SHOP_TOKEN" not in output:
            fail(f"the image started without the credential its configuration names:\n{output}")
        port = free_port()
        process, healthy = start_image(production, dict(desk, SHOP_TOKEN="s3cret"), port)
        status, output = stop(process)
        if not healthy or status != 0:
            fail(f"the image built with production.json did not start with SHOP_TOKEN given (exit {status}):\n{output}")
        print("the image's layout: built and started with config.json, and with --build-arg CONFIG=production.json and "
              "-e SHOP_TOKEN; a file: upstream fails the build; a missing credential stops the start, naming it")

        # 5. Moving to a newer server: --upgrade pins the repository's newest, printing what
        # CHANGELOG.md gained since the pinned commit, and rewrites the script's pin.
        newer = os.path.join(work, "newer.git")
        run(["git", "clone", "--quiet", "--bare", server, newer])
        edit = os.path.join(work, "newer")
        run(["git", "clone", "--quiet", newer, edit])
        with open(os.path.join(edit, "CHANGELOG.md"), "a") as file:
            file.write("- A change made after the project was pinned.\n")
        run(["git", "commit", "--quiet", "-am", "a change"], cwd=edit, env=git)
        run(["git", "push", "--quiet", "origin", "HEAD"], cwd=edit)
        newest = run(["git", "rev-parse", "HEAD"], cwd=edit).stdout.strip()
        upgraded = os.path.join(work, "install-upgraded.sh")
        shutil.copy(os.path.join(project, "scripts/install-taksi-server.sh"), upgraded)
        env_newer = dict(env, TAKSI_SERVER_REPOSITORY="file://" + newer)
        if not commit:
            env_newer["TAKSI_SERVER_COMMIT"] = head  # as if pinned to this clone's head
        result = run(["bash", upgraded, "--upgrade"], env=env_newer)
        if "- A change made after the project was pinned." not in result.stdout or f"now pins {version} ({newest})" not in result.stdout:
            fail(f"--upgrade did not say what changed and what it pins:\n{result.stdout}")
        if f"commit=${{TAKSI_SERVER_COMMIT:-{newest}}}\n" not in open(upgraded).read():
            fail("--upgrade did not rewrite the script's pin")
        env_newer.pop("TAKSI_SERVER_COMMIT", None)
        if run(["bash", upgraded, "--source-id"], env=env_newer).stdout.strip() != f"source-{newest}":
            fail("after --upgrade, the source id is not the new pin")
        if "already at the newest" not in run(["bash", upgraded, "--upgrade"], env=env_newer).stdout:
            fail("a second --upgrade should find nothing newer")
        print(f"--upgrade: pinned {newest[:12]}, printing the CHANGELOG's new line; a second finds nothing newer")

        # 6. Nothing published: the workflow builds the server from the local clone (the pinned
        # commit when there is one).
        if build:
            started = time.monotonic()
            log = play(Runner(workflow, checkout("main"), env, {}))
            print(log)
            if "1 screen is valid" not in log:
                fail("built from source, the server did not validate the screen")
            if commit and f"is {version}+{commit[:12]}" not in log:
                fail(f"built from source, the server is not the pinned commit {commit}")
            print(f"built from source and validated in {time.monotonic() - started:.0f} s")
        else:
            print("building from source: not run (pass --build)")
        print("check-starter: the starter's workflow passes")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
