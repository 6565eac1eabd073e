"""plangraph as an installed package: a built wheel, installed (not editable) into a fresh venv, runs
S1 from the CLI and the README's embedding example from another directory, data files included."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.offline import OFFLINE_ENV

ROOT = Path(__file__).resolve().parents[2]
S1 = "帮我生成一份光伏经济测算报告"
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A venv holding the plangraph wheel; its dependencies come from the test venv's site-packages."""
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    source = work / "source"  # built from a copy: setuptools writes build/ next to the sources
    skip = (".git", ".venv", "build", "*.egg-info", ".plangraph*", "__pycache__", "*_cache", "tests", "bench")
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*skip))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(source),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, **OFFLINE_ENV},
    )
    [wheel] = dist.glob("plangraph-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    # The dependencies (torch, chromadb, …) are the test venv's: a path line, not a site dir, so the
    # test venv's editable plangraph finder is not loaded.
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return venv, work


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_") and k != "PYTHONPATH"}
    return {**env, **OFFLINE_ENV, "PLANGRAPH_EMBEDDINGS": "hash", "PLANGRAPH_DATA_DIR": str(work / "data")}


def test_the_wheel_ships_its_data_and_runs_s1_from_another_directory(installed):
    venv, work = installed
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import tools.pv.data as d, graphs.main; print(d.__file__)"],
        cwd=elsewhere,
        env=_env(work),
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(venv) in probe.stdout and str(ROOT) not in probe.stdout  # the wheel's copy, not the checkout
    run = subprocess.run(
        [str(venv / "bin" / "plangraph"), "run", S1, "--conversation", "w1", "--answer", ANSWER],
        cwd=elsewhere,
        env=_env(work),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert list((work / "data" / "artifacts").rglob("*_report.md"))


def test_the_readme_embedding_example_runs_against_the_wheel(installed):
    venv, work = installed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Embedding it") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    folder = work / "embed"
    folder.mkdir()
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code.group(1)],
        cwd=folder,
        env=_env(work),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "IRR" in result.stdout or "内部收益率" in result.stdout
