#!/usr/bin/env python3
"""hlo_opt.from_torch_xla against the real torch-xla, in a venv of its own.

Makes (or reuses) the torch venv of scripts/gen_frontend_models.py, with
its pins (torch==2.9.0, torch-xla==2.9.0; outside the repository, by
default ~/.cache/hlo-opt-frontends/torch), installs ./python into it (a
Rust build, a few minutes the first time) and runs
python/tests/test_torch_xla.py there with PJRT_DEVICE=CPU: a large
constant kept with its values, the parameters in the order of the graph's
device data (torch.rand's seed too), the numbers equal to torch-xla's,
the module equal to the one a sync compiles (XLA's own dump), and a small
softmax model raised to AwsNeuronSoftmax. Not run in CI (it downloads about 3 GB once).

    python3 scripts/check_from_torch_xla.py [--venv-dir DIR] [--no-install]

Only standard-library Python here.
"""
import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
import gen_frontend_models as frontends  # noqa: E402  (the pins and the venv live there)

PACKAGE_NEEDS = ["maturin>=1.5,<2", "numpy", "ml_dtypes", "pytest"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv-dir", type=Path, default=frontends.DEFAULT_VENVS,
                    help=f"where the frontend venvs live (default {frontends.DEFAULT_VENVS})")
    ap.add_argument("--no-install", action="store_true",
                    help="use the venv and the hlo_opt in it as they are")
    a = ap.parse_args()

    py = frontends.ensure_venv(a.venv_dir, "torch", not a.no_install)
    env = frontends.side_env()
    env["PATH"] = f"{py.parent}{os.pathsep}{env.get('PATH', '')}"  # its maturin builds
    if not a.no_install:
        pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, *PACKAGE_NEEDS], check=True, env=env)
        frontends.log("installing ./python (hlo_opt) into the venv")
        subprocess.run([*pip, "--no-build-isolation", "--force-reinstall", "--no-deps",
                        str(REPO / "python")], check=True, env=env)

    versions = subprocess.run(
        [str(py), "-c", "import sys, torch, torch_xla, numpy; "
         "print(f'python {sys.version.split()[0]}, torch {torch.__version__}, "
         "torch_xla {torch_xla.__version__}, numpy {numpy.__version__}')"],
        check=True, capture_output=True, text=True, env=env).stdout.strip()
    print(f"{datetime.date.today().isoformat()}: {versions}, PJRT_DEVICE=CPU", flush=True)
    p = subprocess.run([str(py), "-m", "pytest", "-v", "-p", "no:cacheprovider",
                        str(REPO / "python" / "tests" / "test_torch_xla.py")],
                       cwd=REPO, env=env)
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
