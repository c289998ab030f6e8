"""The command line's ``main`` run inside the test process: the same argument parsing, commands,
stdout, stderr and exit status as ``python -m evidence_gateway.cli``, without paying the
interpreter start and the imports (seconds a call, minutes on a busy machine) for tests that call
it many times. tests/test_cli.py keeps running the real process, so the entry point itself stays
proven there."""

from __future__ import annotations

import contextlib
import io
import logging
import subprocess
import threading

from evidence_gateway.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``main(args)`` in a thread of its own (the commands call ``asyncio.run``, which cannot run on
    an async test's loop); the caller waits for it, as it would for the process."""
    out, err = io.StringIO(), io.StringIO()
    status: list[int] = []
    failure: list[BaseException] = []

    # What a process without logging configured prints (logging's last resort: warnings and worse,
    # the bare message, on stderr); here pytest's own handler would otherwise swallow it, and the
    # tests' "one line on stderr" checks would miss it.
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)

    def call() -> None:
        root = logging.getLogger()
        root.addHandler(last_resort)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status.append(main(list(args)))
        except SystemExit as exc:  # argparse's own refusals exit
            status.append(exc.code if isinstance(exc.code, int) else 1)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            failure.append(exc)
        finally:
            root.removeHandler(last_resort)

    thread = threading.Thread(target=call, name="cli-main")
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive(), f"evidence-gateway {' '.join(args)} did not finish"
    if failure:
        raise failure[0]
    return subprocess.CompletedProcess(["evidence-gateway", *args], status[0], out.getvalue(), err.getvalue())
