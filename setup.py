"""Build hook, nothing else (the metadata is in pyproject.toml).

The shipped runbook (`steps/`) and the example inventory (`inventory/`) stay
top-level folders of the repository: they are what a site engineer reads and
copies. A built wheel carries a copy of both under `runbook/_shipped/`, where
runbook/shipped.py finds them, so an installed runbook works from any
directory. An editable install reads the checkout's folders directly."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("steps", "inventory")


class BuildWithShipped(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in SHIPPED:
            target = Path(self.build_lib) / "runbook" / "_shipped" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / name, target,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


setup(cmdclass={"build_py": BuildWithShipped})
