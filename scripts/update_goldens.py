"""Regenerate tests/golden/<scenario>.summary.json for every scenario in scenarios/, and
tests/golden/<scenario>.optimize.json for the scenarios of goldens.OPTIMIZE_SCENARIOS.

Run it only when a change in results is intended, then review the diff like code:
``.venv/bin/python scripts/update_goldens.py`` (``--check`` reports stale goldens instead,
exit 1). See tests/golden/goldens.py for the seed, the replication count and the normalization.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.golden.goldens import (
    golden_path,
    golden_text,
    optimize_golden_path,
    optimize_of,
    optimize_scenarios,
    shipped_scenarios,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a golden is stale or missing")
    args = parser.parse_args()
    scenarios = shipped_scenarios()
    stale = []
    jobs = [(golden_path(s), lambda s=s: golden_text(s)) for s in scenarios]
    jobs += [(optimize_golden_path(s), lambda s=s: golden_text(s, optimize_of(s)))
             for s in optimize_scenarios()]
    for target, make in jobs:
        text = make()
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old == text:
            continue
        stale.append(target)
        if not args.check:
            target.write_text(text, encoding="utf-8")
        print(f"{'stale' if args.check else 'updated'}: {target.name}")
    known = {golden_path(s) for s in scenarios}
    for orphan in sorted(set(golden_path(scenarios[0]).parent.glob("*.summary.json")) - known
                         if scenarios else ()):
        stale.append(orphan)
        print(f"{'orphan' if args.check else 'removed'}: {orphan.name}")
        if not args.check:
            orphan.unlink()
    print(f"{len(scenarios)} scenarios, {len(stale)} goldens "
          f"{'stale' if args.check else 'rewritten'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
