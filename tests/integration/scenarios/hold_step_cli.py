"""The plangraph CLI with the sensitivity step held open for a minute, so a test can kill it mid-step.

The registry is patched only when this file runs as a script: pytest imports it for HOLD_MESSAGE,
and an import-time patch would hold sensitivity for a minute in every in-process test after it.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import nodes.agents as registry

HOLD_MESSAGE = "test: holding the step open"


def hold_sensitivity() -> None:
    """Make this process's sensitivity agent emit HOLD_MESSAGE, then sleep a minute before running."""
    specs = registry.agents()
    real = specs["sensitivity"]

    def _held(ctx):  # noqa: ANN001, ANN202
        ctx.emit(HOLD_MESSAGE)
        time.sleep(60)
        return real.run(ctx)

    specs["sensitivity"] = dataclasses.replace(real, run=_held)


if __name__ == "__main__":
    hold_sensitivity()
    from plangraph.cli import main

    sys.exit(main(sys.argv[1:]))
