"""The report in a real browser: headless Chromium (an optional dependency: `apt-get install
chromium` on Debian and Ubuntu) loads the report of a LeNet-5 training run and of the RNN
sample, with no console error; the index lists every compiled function; a mouse click on a
source line marks the generated lines made from it; the region diagram is drawn. Screenshots go
to `$AMBER_TEST_ARTIFACTS` (or the test's temporary directory)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import report

from browser import Browser, find_chromium
from conftest import SAMPLES

pytestmark = pytest.mark.skipif(find_chromium() is None,
                                reason="no Chromium on PATH (apt-get install chromium)")


def _artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("AMBER_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _record_lenet_training() -> None:
    sys.path.insert(0, str(SAMPLES))
    try:
        from train_lenet import LeNetTrainStep, example_inputs
    finally:
        sys.path.remove(str(SAMPLES))
    step = LeNetTrainStep(epochs=1, steps_per_epoch=2)
    images, labels = example_inputs()
    train = amber.jit(step)
    for _ in range(2):
        train(images, labels)
    amber.jit(step.network.backbone_network)(images)


def _record_rnn() -> None:
    sys.path.insert(0, str(SAMPLES))
    try:
        from rnn import EarlyStopRNN, example_inputs
    finally:
        sys.path.remove(str(SAMPLES))
    amber.jit(EarlyStopRNN())(*example_inputs())


@pytest.mark.parametrize("record", [_record_lenet_training, _record_rnn],
                         ids=["lenet-training", "rnn"])
def test_report_in_chromium(record, recording: Path, tmp_path: Path) -> None:
    record()
    run = report.load_run(recording)
    page_file = tmp_path / "report.html"
    report.write_report(recording, page_file)
    with Browser.start() as browser:
        page = browser.open(page_file.as_uri())
        listed = page.evaluate(
            "Array.from(document.querySelectorAll('table.index tbody tr td:first-child'))"
            ".map(td => td.textContent)")
        assert sorted(listed) == sorted(run.functions)
        assert page.evaluate("document.querySelectorAll('section.spec').length") \
            == len(run.specializations)
        # the first specialization: click the line of the user's code the first region came from
        spec = "section.spec"
        key = page.evaluate(f"document.querySelector('{spec} svg.regions g.region')"
                            "?.dataset.key || null")
        selector = (f'{spec} .pane[data-pane=source] .ln[data-key="{key}"]' if key else
                    f"{spec} .pane[data-pane=source] .ln[data-key]:nth-of-type(3)")
        assert page.evaluate(f"!!document.querySelector({selector!r})")
        page.click(selector)
        marked_code = page.evaluate(
            f"Array.from(document.querySelectorAll('{spec} .pane[data-pane=code] .ln.hl'))"
            ".map(e => e.dataset.chain)")
        clicked = page.evaluate(f"document.querySelector({selector!r}).dataset.key")
        assert marked_code, "clicking a source line marked no generated line"
        assert all(clicked in chain.split(" ") for chain in marked_code)
        assert page.evaluate(f"document.querySelector({selector!r}).classList.contains('hl')")
        regions = page.evaluate(
            "Array.from(document.querySelectorAll('svg.regions rect'))"
            ".map(r => r.getBoundingClientRect().width)")
        assert regions and min(regions) > 0
        page.screenshot(_artifacts(tmp_path) / f"report-{record.__name__.strip('_')}.png")
        assert page.console_errors == []


def test_console_errors_are_seen(tmp_path: Path) -> None:
    """The check above can fail: a page whose script throws is reported."""
    page_file = tmp_path / "broken.html"
    page_file.write_text("<html><body><script>document.body.dataset.ready = 'yes';"
                         "setTimeout(() => { throw new Error('boom'); }, 0);</script></body>"
                         "</html>")
    with Browser.start() as browser:
        page = browser.open(page_file.as_uri())
        page.wait_for("true")
        page.evaluate("new Promise(r => setTimeout(r, 100))")
        assert any("boom" in e for e in page.console_errors) or \
            any("Uncaught" in e for e in page.console_errors)
