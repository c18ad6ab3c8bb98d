"""The built wheel, installed into a fresh virtualenv, works from anywhere.

The wheel is built from a copy of the source tree (so no build/ or egg-info lands in the
checkout and no stale build/lib leaks in), installed with --no-deps into a new venv whose
heavy dependencies come from the project venv through a .pth path entry, then its console
script runs from an unrelated folder with HOME and the embedding cache inside that folder.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow

# Repository folder -> installed package, from the one package list (setup.py reads it from the tree).
PACKAGES = runpy.run_path(str(REPO / "setup.py"), run_name="utcgen_setup")["packages"]()
PACKAGE_DIRS = {name.split(".")[1]: name.replace(".", "/") for name in PACKAGES if name.count(".") == 1}
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache",
                                    ".state", "output", "out")


def _source_files(folder: str) -> set[str]:
    """Files of a repository folder as they must appear in the wheel (`utcgen/...`)."""
    root = REPO / folder
    return {f"{PACKAGE_DIRS[folder]}/{p.relative_to(root).as_posix()}" for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


class Installed:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.python = self.venv / "bin" / "python"
        self.utcgen = self.venv / "bin" / "utcgen"
        self.work = root / "work"  # the unrelated folder every command runs in
        self.home = self.work / "home"
        self.wheel: Path | None = None
        self.build_log = ""

    @property
    def site_packages(self) -> Path:
        return self.venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in {"PYTHONPATH", "VIRTUAL_ENV", "HF_HOME", "XDG_CACHE_HOME", "PYTHONHOME"}
               and not k.startswith("UTCGEN_")}
        env.update(HOME=str(self.home), UTCGEN_CACHE_DIR=str(self.home / "utcgen-cache"),
                   PATH=f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                   HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", PREFECT_SERVER_ANALYTICS_ENABLED="false",
                   TOKENIZERS_PARALLELISM="false")
        return env

    def run(self, *cmd: str | Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(c) for c in cmd], cwd=self.work, env=self.env(), capture_output=True, text=True,
                              timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    inst = Installed(tmp_path_factory.mktemp("wheel"))
    src, dist = inst.root / "src", inst.root / "dist"
    shutil.copytree(REPO, src, ignore=NOT_SOURCE)
    # Byte-compilation off (PYTHONDONTWRITEBYTECODE) makes setuptools print a warning of its own.
    build_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(dist), str(src)],
        cwd=inst.root, env=build_env, capture_output=True, text=True, timeout=300)
    inst.build_log = build.stdout + build.stderr
    assert build.returncode == 0, inst.build_log
    (inst.wheel,) = dist.glob("utcgen-*.whl")

    inst.work.mkdir()
    inst.home.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(inst.venv)], check=True, timeout=120)
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(inst.python), "install", "-q", "--no-deps", "--no-index",
         str(inst.wheel)], cwd=inst.work, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    # The dependencies, without downloading: the project venv's site-packages as a plain path entry.
    # Its own .pth files (the editable install's finder among them) are not processed from there.
    project_site = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (inst.site_packages / "_project_deps.pth").write_text("".join(f"{p}\n" for p in sorted(project_site)))
    return inst


def test_build_prints_no_warnings(installed):
    # Setuptools' file operations name files (a module may be called warnings.py); the rest may not warn.
    file_ops = re.compile(r"\s*(copying|adding|creating|writing|removing) ")
    warnings = [line for line in installed.build_log.splitlines()
                if not file_ops.match(line) and re.search(r"warn|deprecat", line, re.I)]
    assert "running bdist_wheel" in installed.build_log  # the backend's own output was captured
    assert not warnings, "\n".join(warnings)


def test_wheel_holds_only_the_utcgen_namespace_with_every_source_and_data_file(installed):
    with zipfile.ZipFile(installed.wheel) as zf:
        names = {n for n in zf.namelist() if not n.endswith("/")}
        entry_points = next(zf.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    stray = sorted(n for n in names if not re.match(r"utcgen/|utcgen-[^/]+\.dist-info/", n))
    assert not stray, f"outside the utcgen namespace: {stray}"
    for folder in PACKAGE_DIRS:
        missing = sorted(_source_files(folder) - names)
        assert not missing, f"{folder}/ files not in the wheel: {missing}"
    assert "utcgen/configs/default.yaml" in names
    assert "utcgen/catalog/personas.jsonl" in names
    assert any(re.fullmatch(r"utcgen/catalog/tools/[^/]+\.json", n) for n in names)
    assert any(re.fullmatch(r"utcgen/prompts/[^/]+\.txt", n) for n in names)
    assert re.search(r"^utcgen\s*=\s*utcgen\.pipeline\.cli:main$", entry_points, re.M), entry_points
    shipped = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if not n.startswith("utcgen-")}
    assert shipped == set(PACKAGES), f"packages in the wheel differ from setup.py's: {sorted(shipped ^ set(PACKAGES))}"
    assert "utcgen/setup.py" not in names


def test_fresh_venv_imports_the_installed_wheel_not_the_checkout(installed):
    probe = (
        "import json, sys, importlib.metadata as md\n"
        "import utcgen.pipeline, utcgen.validators, utcgen.flows\n"
        "from utcgen.pipeline.core.resources import shipped\n"
        "print(json.dumps({'files': [utcgen.pipeline.__file__, utcgen.validators.__file__, utcgen.flows.__file__,\n"
        "                            str(shipped('catalog', 'tools')), str(shipped('prompts')),\n"
        "                            str(md.distribution('utcgen')._path)],\n"
        "                  'namespace': list(utcgen.__path__),\n"
        "                  'editable': [type(f).__module__ for f in sys.meta_path if 'editable' in type(f).__module__]\n"
        "                              + [m for m in sys.modules if 'editable' in m]}))\n"
    )
    result = installed.run(installed.python, "-c", probe)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    site = str(installed.site_packages.resolve())
    assert info["editable"] == []
    assert [str(Path(p).resolve()) for p in info["namespace"]] == [str((installed.site_packages / "utcgen").resolve())]
    for path in info["files"]:
        assert str(Path(path).resolve()).startswith(site + os.sep), path


def test_installed_generate_writes_a_dataset(installed):
    out = installed.work / "dataset"
    result = installed.run(installed.utcgen, "generate", "--out", out, "--num-dialogues", "3", "--no-progress",
                           timeout=600)
    assert result.returncode == 0, result.stderr
    assert "done: 3 accepted" in result.stderr, result.stderr
    assert (out / "README.md").is_file()
    stats = json.loads((out / "stats.json").read_text())
    assert stats["counts"]["accepted"] == 3
    # The run read the catalog and personas shipped in the fresh venv (its run facts say where from).
    used = _values_of(stats, {"catalog", "personas"})
    shipped = {str(installed.site_packages / "utcgen" / "catalog" / "tools"),
               str(installed.site_packages / "utcgen" / "catalog" / "personas.jsonl")}
    assert used and set(used) <= shipped, used
    import pyarrow.parquet as pq

    (dialogues,) = (out / "data" / "dialogues").glob("*.parquet")
    assert pq.read_table(dialogues).num_rows == 3
    sft = list((out / "data" / "sft").glob("*.parquet"))
    assert sft and sum(pq.read_table(p).num_rows for p in sft) == stats["counts"]["sft_rows"] > 0


def _values_of(data, keys: set[str]) -> list[str]:
    """Every string value stored under one of `keys`, at any depth."""
    if isinstance(data, dict):
        return [v for k, v in data.items() if k in keys and isinstance(v, str)] + [
            x for v in data.values() for x in _values_of(v, keys)]
    if isinstance(data, list):
        return [x for v in data for x in _values_of(v, keys)]
    return []


def test_installed_catalog_validate_and_stats_on_the_shipped_catalog(installed):
    catalog = installed.site_packages / "utcgen" / "catalog" / "tools"
    validate = installed.run(installed.utcgen, "catalog", "validate", catalog)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    ok = re.search(r"^OK: (\d+) tools", validate.stdout, re.M)
    assert ok, validate.stdout
    stats = installed.run(installed.utcgen, "catalog", "stats", catalog, "--json", timeout=600)
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert data["tools"] == int(ok.group(1)) > 0
    assert sum(data["lines_of_business"].values()) == data["tools"]
    assert 0.0 <= data["share_with_near_duplicate"] <= 1.0
