"""The package list, read from the tree: the repository root is the `utcgen` package (pyproject's
`package-dir`), each top-level folder holding an `__init__.py` is one of its subpackages, and so is
every folder inside one (code, or data such as catalog/tools). This is the one place the package map
is written; the wheel test reads it from here too."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
NOT_SHIPPED = {"tests", "build", "bench", "examples", "docs"}  # folders of the checkout that are not the package


def packages(root: Path = ROOT) -> list[str]:
    """`utcgen` and `utcgen.<dotted folder>` for every package folder under the root."""
    found = ["utcgen"]
    for top in sorted(root.iterdir()):
        if top.name in NOT_SHIPPED or not (top / "__init__.py").is_file():
            continue
        for folder in [top, *sorted(d for d in top.rglob("*") if d.is_dir())]:
            parts = folder.relative_to(root).parts
            if not any(p.startswith((".", "__pycache__")) for p in parts):
                found.append(".".join(("utcgen", *parts)))
    return found


class BuildPy(build_py):
    """Leaves this file out of the wheel: its folder is the `utcgen` package, but it is no module of it."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        return [m for m in super().find_package_modules(package, package_dir) if (m[0], m[1]) != ("utcgen", "setup")]


if __name__ == "__main__":
    setup(packages=packages(), cmdclass={"build_py": BuildPy})
