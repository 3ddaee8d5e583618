#!/usr/bin/env python3
"""Checks the live preview (/preview) in a real browser: headless Chromium, as a person uses it.

    scripts/check-preview.py [PATH_TO_TAKSI_SERVER] [--screenshot FILE]

Starts the server on a copy of the example screens (port 0, the repository's config.json, which
turns the preview on), drives Debian's `chromium` over the DevTools protocol on a pipe (no
driver, no Python packages), and checks the rendered DOM after each step has reached its data
phase (the page's <main data-phase>):

1. /preview/home?version=2.1&name=Ada: the filled values, the variant chosen for 2.1, and links
   of navigation actions that lead to their targets' previews (one is followed);
2. the same page with a name holding markup: it shows as text, no element is made of it;
3. /preview/home without a version: the other variant, and the version control switching back;
   a list row that opens a screen with a path parameter, and a pattern's preview asking for it;
   the repository search's "More", growing its list 30, 60, 90 and then gone;
4. an edit saved to the screen file is drawn without a reload; a broken edit shows its errors
   with file:line:col while the last good screen stays;
5. /preview lists every screen.

A screenshot of step 1 is kept (default .build/artifacts/preview-home.png). Exits 1 on the
first failed check, printing the DOM it saw.
"""
import base64
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# How long one step may take before the check fails (a slow machine loads in well under this).
STEP_SECONDS = 60


class Failure(Exception):
    pass


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated JSON)."""

    def __init__(self, profile):
        self.to_browser_read, self.to_browser = os.pipe()
        self.from_browser, self.from_browser_write = os.pipe()

        def connect_pipes():
            os.dup2(self.to_browser_read, 3)
            os.dup2(self.from_browser_write, 4)

        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        if not executable:
            raise Failure("chromium is not installed: apt-get install chromium")
        self.process = subprocess.Popen(
            [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
             "--window-size=1400,1000", f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=connect_pipes, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(self.to_browser_read)
        os.close(self.from_browser_write)
        self.pending = b""
        self.next_id = 0
        self.session = None

    def call(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + STEP_SECONDS
        while True:
            while b"\0" not in self.pending:
                ready, _, _ = select.select([self.from_browser], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise Failure(f"the browser did not answer {method}")
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise Failure("the browser exited")
                self.pending += chunk
            raw, self.pending = self.pending.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise Failure(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def open(self, url):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.call("Page.enable")
        self.navigate(url)

    def navigate(self, url):
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise Failure(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what):
        deadline = time.monotonic() + STEP_SECONDS
        while time.monotonic() < deadline:
            try:
                if self.evaluate(expression):
                    return
            except Failure:
                pass  # the page is between documents (a navigation): ask again
            time.sleep(0.05)
        raise Failure(f"timed out waiting for {what}\n--- DOM ---\n{self.dom()}")

    def dom(self):
        return self.evaluate("document.documentElement.outerHTML")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except Failure:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_server(binary, directory):
    """The server on a free port (port 0); returns the process and its base URL."""
    server = subprocess.Popen(
        [binary, "serve", "--port", "0", "--no-access-log", "--watch-interval", "0.2"], cwd=directory,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    for line in server.stderr:
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            # Keep draining the log so the server never blocks on a full pipe.
            subprocess.Popen(["cat"], stdin=server.stderr, stdout=subprocess.DEVNULL)
            return server, found.group(1)
    raise Failure("the server did not start:\n" + (server.stderr.read() if server.stderr else ""))


def check(condition, message, browser):
    if not condition:
        raise Failure(f"{message}\n--- DOM ---\n{browser.dom()}")


def text_of(browser, selector):
    return browser.evaluate(f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''")


def set_control(browser, name, value):
    """Types `value` into the control named `name` as a person would, and commits it (change)."""
    browser.evaluate(f"(() => {{ const input = document.querySelector('[data-control={json.dumps(name)}]'); "
                     f"input.value = {json.dumps(value)}; input.dispatchEvent(new Event('change', {{ bubbles: true }})); }})()")


def wait_for_data(browser, what):
    browser.wait_for("document.readyState === 'complete' && document.querySelector('main')?.dataset.phase === 'data'", what)


def main():
    arguments = sys.argv[1:]
    screenshot = os.path.join(ROOT, ".build", "artifacts", "preview-home.png")
    if "--screenshot" in arguments:
        index = arguments.index("--screenshot")
        screenshot = arguments[index + 1]
        del arguments[index:index + 2]
    binary = arguments[0] if arguments else os.path.join(ROOT, ".build", "debug", "taksi-server")

    work = tempfile.mkdtemp(prefix="taksi-preview-")
    for name in ("Screens", "upstreams"):
        shutil.copytree(os.path.join(ROOT, name), os.path.join(work, name))
    shutil.copy(os.path.join(ROOT, "config.json"), work)
    server, base = start_server(binary, work)
    browser = Browser(os.path.join(work, "profile"))
    try:
        # 1. A version and a query parameter: the filled values, the variant, the links.
        browser.open(f"{base}/preview/home?version=2.1&name=Ada")
        wait_for_data(browser, "the data phase of /preview/home?version=2.1&name=Ada")
        check(text_of(browser, '[data-identifier="greeting"]') == "Hello, Ada!", "the greeting is filled from the query", browser)
        check("Open now near Central Station" in text_of(browser, '[data-identifier="headline"]'), "the headline is filled", browser)
        check("Sakura Ramen" in text_of(browser, '[data-identifier="restaurants"]'), "the restaurant cards are filled", browser)
        check(text_of(browser, "#variant").startswith("home|>= 2.0|default"), "the variant for app 2.1 is shown", browser)
        check(browser.evaluate("!!document.querySelector('input[data-control=\"platform\"]')"), "the platform is a control", browser)
        tags = text_of(browser, "#cache-tags").split()
        check("taksi:screen:home" in tags and "taksi:fragment:greeting" in tags, "the CDN tags of the variant are shown", browser)
        link = browser.evaluate("(document.querySelector('a[href^=\"/preview/restaurants/sakura-ramen\"]') || {}).href || ''")
        check("version=2.1" in link, "a card's navigation links to its target's preview, with the app version", browser)
        check(browser.evaluate("!!document.querySelector('a[href^=\"/preview/landing\"]')"), "the log out button links to landing's preview", browser)
        check(browser.evaluate("document.querySelectorAll('img[src^=\"https://images.example.com/\"]').length") >= 4,
              "url fields holding images are drawn as images", browser)
        browser.screenshot(screenshot)
        print(f"preview: screenshot of /preview/home kept at {os.path.relpath(screenshot, ROOT)}")
        browser.evaluate("document.querySelector('a[href^=\"/preview/restaurants/sakura-ramen\"]').click()")
        browser.wait_for("location.pathname === '/preview/restaurants/sakura-ramen'", "the navigation to the target's preview")
        wait_for_data(browser, "the data phase of the restaurant's preview")
        check(text_of(browser, "#variant").startswith("restaurants/{id}"), "the target screen is shown", browser)

        # 2. Markup in a value is text.
        markup = "<img src=x onerror=alert(1)>"
        browser.navigate(f"{base}/preview/home?version=2.1&name=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
        wait_for_data(browser, "the data phase with markup in the name")
        check(text_of(browser, '[data-identifier="greeting"]') == f"Hello, {markup}!", "markup in a value is shown as text", browser)
        check(browser.evaluate("document.querySelectorAll('img[src=\"x\"]').length") == 0, "no element is made from a value", browser)
        check("Hello, &lt;img src=x onerror=alert(1)&gt;!" in browser.dom(), "the DOM holds the value escaped", browser)

        # 3. No version: the other variant; changing the version control changes the URL and the variant.
        browser.navigate(f"{base}/preview/home")
        wait_for_data(browser, "the data phase of /preview/home")
        check(text_of(browser, "#variant").startswith("home|*|default"), "an app without a version gets the classic variant", browser)
        set_control(browser, "version", "2.0")
        browser.wait_for("location.search === '?version=2.0' && document.querySelector('main')?.dataset.phase === 'data' "
                         "&& document.getElementById('variant').textContent.startsWith('home|>= 2.0|default')",
                         "the version control to select the other variant")

        # Path parameters: a list row opens its detail; a pattern's preview asks for its values.
        browser.navigate(f"{base}/preview/bikes/networks")
        wait_for_data(browser, "the data phase of /preview/bikes/networks")
        browser.evaluate("document.querySelector('a[href^=\"/preview/bikes/stations/velib\"]').click()")
        browser.wait_for("location.pathname === '/preview/bikes/stations/velib'", "the navigation to a screen with a path parameter")
        wait_for_data(browser, "the data phase of /preview/bikes/stations/velib")
        check(text_of(browser, "#variant").startswith("bikes/stations/{network}"), "the pattern's screen is shown", browser)
        browser.navigate(f"{base}/preview/bikes/stations/%7Bnetwork%7D")
        browser.wait_for("document.querySelector('main')?.dataset.phase === 'parameters'", "the request for the path parameter")
        set_control(browser, "path:network", "velib")
        browser.wait_for("location.pathname === '/preview/bikes/stations/velib' && document.querySelector('main')?.dataset.phase === 'data'",
                         "the filled path parameter to load the screen")

        # A list that continues: "More" loads the next page into it, until the last.
        browser.navigate(f"{base}/preview/repositories?q=swift")
        wait_for_data(browser, "the data phase of /preview/repositories?q=swift")
        def rows():
            return browser.evaluate("document.querySelectorAll('[data-identifier=\"results\"] > :not(button)').length")
        check(rows() == 30, f"the first page shows 30 results (found {rows()})", browser)
        for shown in (60, 90):
            browser.evaluate("document.querySelector('button[data-more=\"results\"]').click()")
            browser.wait_for(f"document.querySelector('main')?.dataset.phase === 'data' "
                             f"&& document.querySelectorAll('[data-identifier=\"results\"] > :not(button)').length === {shown}",
                             f"the list to grow to {shown}")
        check(not browser.evaluate("!!document.querySelector('button[data-more]')"), "the last page shows no More", browser)
        check("example/swift-networking-90" in text_of(browser, '[data-identifier="results"]'), "the third page's items are drawn", browser)

        # 4. A form submits: the text fields go to the action, its patch is drawn, its next action shown.
        browser.navigate(f"{base}/preview/login")
        wait_for_data(browser, "the login form")
        def type_into(identifier, value):
            browser.evaluate(f"document.querySelector('input[data-identifier={json.dumps(identifier)}]').value = {json.dumps(value)}")
        type_into("email", "ada")
        type_into("password", "correct-horse")
        browser.evaluate("document.querySelector('button[data-submits=\"submit\"]').click()")
        browser.wait_for("document.querySelector('main')?.dataset.submitted === 'submit 422'", "the invalid submit's answer")
        check(text_of(browser, '[data-identifier="email_error"]') == "Enter an email address, like ada@example.com.",
              "the 422 patch fills the email's error label", browser)
        check(browser.evaluate("document.querySelector('input[data-identifier=\"email\"]').value") == "ada", "typed text stays", browser)
        type_into("email", "ada@example.com")
        browser.evaluate("document.querySelector('button[data-submits=\"submit\"]').click()")
        browser.wait_for("document.querySelector('main')?.dataset.submitted === 'submit 200'", "the valid submit's answer")
        check(text_of(browser, '[data-identifier="email_error"]').strip() == "", "the success patch clears the label", browser)
        check(browser.evaluate("!!document.querySelector('p.then a[href^=\"/preview/home\"]')"), "the next action links to home's preview", browser)

        # 5. Live: an edit is drawn, a broken edit shows its errors and keeps the last good screen.
        browser.navigate(f"{base}/preview/home?version=2.1&name=Ada")
        wait_for_data(browser, "the data phase before the edit")
        browser.evaluate("window.__samePage = true")
        # The copy is edited where it lives, in the string table; the screen file is broken.
        strings = os.path.join(work, "Screens", "strings", "en.yaml")
        home = os.path.join(work, "Screens", "home.yaml")
        original_strings = open(strings, encoding="utf-8").read()
        original = open(home, encoding="utf-8").read()
        edited = original_strings.replace("categories: Categories", "categories: Kitchens")
        check(edited != original_strings, "the example strings/en.yaml has the categories title this check edits", browser)
        with open(strings, "w", encoding="utf-8") as file:
            file.write(edited)
        browser.wait_for("document.querySelector('[data-identifier=\"categories_title\"]')?.textContent === 'Kitchens' "
                         "&& document.querySelector('main')?.dataset.phase === 'data'", "the edit to be drawn")
        check(browser.evaluate("window.__samePage === true"), "the edit is drawn without reloading the page", browser)
        broken = original.replace("kind: subtitle", "kind: headline", 1)
        check(broken != original, "the example home.yaml has a subtitle this check breaks", browser)
        with open(home, "w", encoding="utf-8") as file:
            file.write(broken)
        browser.wait_for("!document.getElementById('pending').hidden", "the broken edit's errors")
        errors = text_of(browser, "#pending-list")
        check(re.search(r"home\.yaml:\d+:\d+", errors) and "headline" in errors, "the errors name file:line:col", browser)
        check(text_of(browser, '[data-identifier="categories_title"]') == "Kitchens", "the last good screen stays", browser)
        with open(home, "w", encoding="utf-8") as file:
            file.write(original)
        with open(strings, "w", encoding="utf-8") as file:
            file.write(original_strings)
        browser.wait_for("document.getElementById('pending').hidden "
                         "&& document.querySelector('[data-identifier=\"categories_title\"]')?.textContent === 'Categories'",
                         "the fixed file to clear the errors")

        # 6. The list of screens.
        browser.navigate(f"{base}/preview")
        browser.wait_for("document.querySelector('main')?.dataset.phase === 'list'", "the list of screens")
        for name in ("home", "login", "landing", "bikes/stations/{network}"):
            check(name in text_of(browser, "table.screens"), f"the list names {name}", browser)
        statuses = browser.evaluate("[...document.querySelectorAll('.experiment-status')].map((e) => e.textContent).join('|')")
        check("running" in statuses, f"the list says landing's experiment runs (found {statuses!r})", browser)
        print("preview: browser checks passed (values, variant, navigation, markup as text, version control, path parameters, a form submit, live edit, errors, a list's More, the list of screens)")
    except Failure as failure:
        print(f"preview check failed: {failure}")
        sys.exit(1)
    finally:
        browser.close()
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
