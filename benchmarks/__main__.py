"""Runs every benchmark section and prints one markdown report.

Usage: ``python -m benchmarks [--quick] [--only NAME ...]``. Each section measures ai_widgets and the
alternatives in the same run and reports ratios, so figures from one run compare with each other.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time

SECTIONS = [
    "bench_arguments",
    "bench_tool_definitions",
    "bench_session",
    "bench_history",
    "bench_widget",
    "bench_open",
    "bench_frontend",
    "bench_saved_notebook",
    "bench_attachments",
    "bench_kernel_namespace",
    "bench_provider_openai_chat",
    "bench_provider_openai_responses",
    "bench_provider_anthropic",
    "bench_provider_gemini",
    "bench_pydantic_ai",
    "bench_acp_updates",
    "bench_request_building",
    "bench_run_python",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes and caps: a smoke run of a minute or so")
    parser.add_argument("--only", nargs="*", choices=SECTIONS, help="run only these sections")
    args = parser.parse_args(argv)
    print(f"# ai_widgets benchmarks ({'quick' if args.quick else 'full'})\n")
    print(f"Python {platform.python_version()} on {platform.machine()}, {time.strftime('%Y-%m-%d %H:%M')}\n")
    for name in args.only or SECTIONS:
        module = importlib.import_module(f"benchmarks.{name}")
        started = time.perf_counter()
        print(module.run(quick=args.quick))
        print(f"_(section took {time.perf_counter() - started:.1f} s)_\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
