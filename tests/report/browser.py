"""A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
JSON messages ended by a NUL byte, the browser reading fd 3 and writing fd 4), so the browser
tests need Chromium and nothing else: no driver binary, no websocket library.

    with Browser.start() as browser:
        page = browser.open("file:///tmp/report.html")
        page.evaluate("document.title")
        page.click_at(x, y)              # a real mouse event, as a user's click
        page.screenshot("shot.png")
        page.console_errors              # console errors and uncaught exceptions seen
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--window-size=1400,1000")
TIMEOUT = 30.0


def find_chromium() -> str | None:
    """The Chromium executable ($AMBER_CHROMIUM, else the first on PATH), or None."""
    explicit = os.environ.get("AMBER_CHROMIUM")
    if explicit:
        return explicit if os.path.exists(explicit) else None
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, process: subprocess.Popen, to_browser: int, from_browser: int,
                 profile: str) -> None:
        self.process, self.to_browser, self.from_browser = process, to_browser, from_browser
        self.profile = profile
        self.next_id = 0
        self.buffer = b""
        self.events: list[dict[str, Any]] = []

    @classmethod
    def start(cls, executable: str | None = None) -> "Browser":
        executable = executable or find_chromium()
        if executable is None:
            raise BrowserError("no Chromium found")
        profile = tempfile.mkdtemp(prefix="amber-chromium-")
        # NOTE: the browser reads commands on its fd 3 and writes replies on its fd 4
        cmd_read, cmd_write = os.pipe()
        reply_read, reply_write = os.pipe()

        def wire() -> None:  # NOTE: via fds >= 10 first, so neither dup2 overwrites the other
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (cmd_read, reply_write)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, close_fds=False)
        os.close(cmd_read)
        os.close(reply_write)
        return cls(process, cmd_write, reply_read, profile)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- the protocol ---------------------------------------------------------------------------
    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its reply (events seen meanwhile are kept)."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise BrowserError(f"{method}: no reply in {TIMEOUT:.0f} s")

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise BrowserError("the browser closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str) -> "Page":
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        page.send("Runtime.enable")
        page.send("Log.enable")
        page.send("Page.enable")
        page.send("Page.navigate", url=url)
        page.wait_for("document.body && document.body.dataset.ready === 'yes'")
        return page


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, self.session, **params)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                if self.evaluate(expression):
                    return
            except BrowserError:
                pass
            time.sleep(0.05)
        raise BrowserError(f"timed out waiting for {expression}")

    def click_at(self, x: float, y: float) -> None:
        """A left click at page coordinates, as the mouse makes it (pressed, then released)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def click(self, selector: str) -> None:
        """Scroll the first element matching `selector` into view and click its centre."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; })()")
        self.click_at(*box)

    def screenshot(self, path: str | Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path

    @property
    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads this page reported."""
        errors = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(str(params.get("exceptionDetails", {}).get("text")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                errors.append(" ".join(str(a.get("value")) for a in params.get("args", ())))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(str(params["entry"].get("text")))
        return errors
