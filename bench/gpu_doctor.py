"""The GPU check, kept here for the measurement notes that name it; the check itself is `gpuguide doctor`
(assistant/doctor.py, which says why it exists). Prints the same JSON object as `gpuguide doctor --json`.

    python bench/gpu_doctor.py [--model FILE.gguf] [--timeout 90] [--all]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import write_report

from assistant.doctor import add_arguments, gpu_report
from core.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args()
    write_report(gpu_report(load_settings(), args.model, args.timeout, args.run_anyway), None)


if __name__ == "__main__":
    main()
