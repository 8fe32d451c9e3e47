"""``costsim sweep``: a scenario's variants × Monte Carlo on Dask or a local process pool,
cached per task in ``--out`` so that ``--resume`` finishes an interrupted sweep (docs/sweep.md)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.cli.common import EXIT_OK, examples, print_json
from costsim.cli.sim_flags import add_replications_and_seed, add_scenario_arg, add_workers_flag

if TYPE_CHECKING:
    from costsim.domain.currency import Currency
    from costsim.sweep.results import SweepResult

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as `run`
# `local`, or a Dask scheduler address: tcp://host:8786, tls://…, or host:port
_ADDRESS = re.compile(r"^((tcp|tls|ucx|ws|wss)://)?[A-Za-z0-9._\-\[\]:]+:[0-9]{1,5}$")


def _scheduler(text: str) -> str:
    if text == "local" or _ADDRESS.match(text):
        return text
    raise argparse.ArgumentTypeError(
        f"must be 'local' or a Dask scheduler address such as tcp://host:8786 (got {text!r})")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim sweep``."""
    sweep = commands.add_parser(
        "sweep", help="simulate a scenario's variants (--set KEY.PATH=V1,V2) on Dask",
        description=(
            "Simulate every variant of a scenario — the Cartesian product of the --set "
            "overrides, or the variants a sweep file lists — with the plans and replications "
            "asked for, on a Dask cluster (--scheduler local starts one with --workers "
            "single-threaded processes; an address connects to a running one) or, without the "
            "'distributed' extra, on a local process pool. Work is split into tasks of 10 "
            "replications of a variant, seeded as in `run`, so results do not depend on the "
            "workers, and a variant equal to the scenario gives `run`'s figures. Each finished "
            "task is cached in --out at once; --resume finishes an interrupted sweep without "
            "redoing finished tasks. Writes results.parquet (results.csv without pyarrow), "
            "sweep.json and charts in report/; prints one row per variant and plan "
            "(docs/sweep.md)."),
        epilog=examples(
            "costsim sweep scenarios/inference-growth.yaml --set "
            "prices.gpu_price_change_pct.H100=-10,-25,-40 --replications 20 "
            "--out reports/h100-prices",
            "costsim sweep scenarios/inference-growth.yaml --set "
            "prices.gpu_price_change_pct.H100=-10,-25,-40 --replications 20 "
            "--out reports/h100-prices --resume",
            "costsim sweep scenarios/lifecycle-assistant.yaml --sweep-file "
            "sweeps/lifecycle-what-if.yaml --plan reserved-base --replications 10 --workers 2 "
            "--json"),
    )
    add_scenario_arg(sweep)
    sweep.add_argument("--set", action="append", dest="sets", metavar="KEY.PATH=V1,V2",
                       default=[],
                       help="a key path of the scenario and the values to sweep it over, e.g. "
                            "phases.train.tokens=1e12,2e12 (repeatable: the variants are the "
                            "Cartesian product; docs/sweep.md; default: the file as written)")
    sweep.add_argument("--sweep-file", type=Path, metavar="FILE",
                       help="a sweep file listing the variants explicitly (sweeps/); with "
                            "--set, each of its variants is crossed with the --set product "
                            "(default: none)")
    sweep.add_argument("--plan", action="append", metavar="NAME",
                       help="simulate only this plan (repeatable; default: every plan)")
    add_replications_and_seed(sweep)
    sweep.add_argument("--scheduler", type=_scheduler, default="local",
                       metavar="local|ADDRESS",
                       help="'local' starts a Dask LocalCluster (a process pool without the "
                            "'distributed' extra); an address such as tcp://host:8786 uses a "
                            "running Dask scheduler (default local)")
    add_workers_flag(sweep, "with --scheduler local; default: the CPU cores, at most 4")
    sweep.add_argument("--out", type=Path, metavar="DIR",
                       help="sweep folder: cache, results, sweep.json, report/; must not exist "
                            "unless --resume (default: reports/<scenario file name>-sweep-<UTC "
                            "time>/)")
    sweep.add_argument("--resume", action="store_true",
                       help="continue the interrupted sweep in --out: reuse every finished "
                            "task whose inputs are unchanged (default off)")
    sweep.add_argument("--json", action="store_true",
                       help="print sweep.json on stdout instead of the table (default: the "
                            "table)")
    sweep.set_defaults(handler=_sweep)


def _utc_now() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC)


def _sweep(args: argparse.Namespace) -> int:
    from costsim.cli.report_folder import default_out_dir
    from costsim.cli.sweep_folder import check_sweep_out, open_sweep_out
    from costsim.cli.sweep_variants import load_variants
    from costsim.errors import CatalogError, InputError

    now = _utc_now()
    out: Path = (args.out if args.out is not None
                 else default_out_dir(args.scenario.with_name(f"{args.scenario.stem}-sweep"),
                                      now))
    check_sweep_out(out, args.resume)  # refuse before loading anything, as `run`
    if args.workers is not None and args.scheduler != "local":
        raise InputError("--workers", str(args.workers), "applies to --scheduler local only: "
                         "a running Dask cluster has the workers it was started with")
    base, variants = load_variants(args.scenario, args.sets, args.sweep_file)
    names = [p.name for p in base.scenario.plans]
    for name in args.plan or ():
        if name not in names:
            raise CatalogError("plan", name, names, source="--plan")
    open_sweep_out(out, args.resume, {"scenario": str(args.scenario), "sets": args.sets,
                                      "sweep_file": str(args.sweep_file or "")})
    try:
        result = _simulate(variants, args, out)
    except KeyboardInterrupt:
        sys.stderr.write(f"costsim sweep: interrupted; the finished tasks are kept in {out}; "
                         "run the same command with --resume to finish\n")
        return EXIT_INTERRUPTED
    return _write_and_print(result, base.sha256, args, out, now, base.scenario.currency)


def _simulate(variants: Any, args: argparse.Namespace, out: Path) -> SweepResult:
    import time

    from costsim import __version__
    from costsim.catalog.price_tables import price_book_date
    from costsim.catalog.resources import shipped_data_sha256
    from costsim.cli.progress import RunProgress
    from costsim.cli.run_pipeline import default_workers
    from costsim.cli.work_notice import announce
    from costsim.sim.work import combine, estimate_work
    from costsim.sweep.cache import TaskCache
    from costsim.sweep.engines import open_engine
    from costsim.sweep.run import run_sweep
    from costsim.sweep.tasks import SweepSettings

    settings = SweepSettings(
        seed=args.seed, replications=args.replications,
        plans=tuple(args.plan) if args.plan else None, costsim_version=__version__,
        price_book=f"{price_book_date()} data-sha256:{shipped_data_sha256()}")
    workers = args.workers or default_workers()
    estimate = combine([estimate_work(v.scenario, replications=args.replications,
                                      workers=workers, plans=args.plan) for v in variants])
    announce("sweep", estimate, what="variant plans")
    engine, notice = open_engine(args.scheduler, workers)
    if notice:
        sys.stderr.write(notice + "\n")
    try:
        tasks = len(variants) * -(-settings.replications // settings.block_size)
        with RunProgress(1, tasks, unit="task", desc="sweeping",
                         expected_s=estimate.seconds) as progress:
            return run_sweep(variants, settings, engine, cache=TaskCache(out),
                             progress=progress, clock=time.perf_counter)
    finally:
        engine.close()


def _write_and_print(result: SweepResult, scenario_sha256: str, args: argparse.Namespace,
                     out: Path, now: Any, currency: Currency) -> int:
    from costsim import __version__
    from costsim.catalog.price_tables import price_book_date
    from costsim.cli.sweep_table import render_sweep
    from costsim.domain.currency import currency_json
    from costsim.report.files import json_bytes
    from costsim.report.sweep import sweep_json, write_sweep_report
    from costsim.sweep.cache import write_atomic
    from costsim.sweep.table_file import write_table

    table_path = write_table(result, out)
    write_sweep_report(result, out, currency)
    document = sweep_json(result, results_path=str(table_path), provenance={
        "scenario": str(args.scenario), "scenario_sha256": scenario_sha256,
        "costsim_version": __version__, "price_book_date": price_book_date(),
        **currency_json(currency), "generated_at": now.strftime("%Y-%m-%dT%H:%M:%SZ")})
    write_atomic(out / "sweep.json", json_bytes(document))
    if result.tasks_from_cache:
        sys.stderr.write(f"costsim sweep: {result.tasks_from_cache} of {result.tasks} tasks "
                         f"came from the cache in {out}\n")
    if args.json:
        print_json({**document, "report_dir": str(out)})
    else:
        print(render_sweep(result, str(out), table_path.name, currency))
    return EXIT_OK
