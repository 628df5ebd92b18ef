"""Retrieval quality by mode on the dev question set, all modes side by side in one run (the same
harness as `gpuguide eval`), with the reading planner answering the "next" questions. Prints JSON.

    .venv/bin/python bench/quality.py [--k 10]
"""

from __future__ import annotations

import argparse
import json

from common import QUESTIONS, real_corpus_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    from assistant.services import eval_planner
    from index.evaluate import ALL_MODES, run_eval

    settings = real_corpus_settings()
    report = run_eval(QUESTIONS, modes=list(ALL_MODES), k=args.k, settings=settings, planner=eval_planner(settings))
    print(json.dumps({"questions": str(QUESTIONS.name), "k": args.k, "metrics": report["metrics"]}, indent=2))


if __name__ == "__main__":
    main()
