"""Background builds set a short switch interval while any of them runs (ops/background.py)."""
from __future__ import annotations

import sys
import threading

from amber.ops.background import BUILD_INTERVAL, yielding_often


def test_overlapping_builds_put_the_user_s_interval_back_when_the_last_ends() -> None:
    user = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.02)
        first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
        seen = []

        def first() -> None:
            with yielding_often():
                first_in.set()
                second_in.wait(10)
            first_out.set()

        def second() -> None:
            first_in.wait(10)
            with yielding_often():
                second_in.set()
                first_out.wait(10)
                seen.append(sys.getswitchinterval())  # NOTE: the first build has ended
        threads = [threading.Thread(target=f) for f in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert seen == [BUILD_INTERVAL]
        assert sys.getswitchinterval() == 0.02
        sys.setswitchinterval(BUILD_INTERVAL / 4)  # NOTE: a shorter user value stays
        shorter = sys.getswitchinterval()
        with yielding_often():
            assert sys.getswitchinterval() == shorter
        assert sys.getswitchinterval() == shorter
    finally:
        sys.setswitchinterval(user)
