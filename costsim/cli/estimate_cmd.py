"""``costsim estimate train`` and ``costsim estimate serve`` (docs/performance.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from costsim.cli.common import EXIT_OK, OneLineParser, add_json_flag, examples, print_json
from costsim.cli.flags import (
    add_compute_args,
    add_gpu_arg,
    add_inference_args,
    add_kv_dtype_arg,
    add_layout_args,
    add_model_args,
    add_profile_arg,
    add_replica_args,
    add_task_arg,
    add_training_args,
    range_argtype,
)
from costsim.cli.ranges import (
    CLOUD_NAMES,
    DEFAULT_BATCH_HELP,
    FLAG_RANGES,
    NETWORK_NAMES,
    describe,
)
from costsim.errors import InputError

ENGINES = ("vllm", "vllm-v0", "tensorrt-llm", "sglang", "llama.cpp", "torch-compile",
           "hf-transformers", "tgi")


def _named_choice(what: str, values: tuple[str, ...],
                  aliases: dict[str, str] | None = None) -> Callable[[str], str]:
    """An argparse type for one of ``values`` (case-insensitive, ``_`` read as ``-``, aliases
    mapped); a miss names the closest values, else all of them."""
    def parse(text: str) -> str:
        value = text.strip().lower().replace("_", "-")
        value = (aliases or {}).get(value, value)
        if value not in values:
            from costsim.errors import suggest

            hint = suggest(value, values)
            extra = (f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint
                     else f" (valid: {', '.join(values)})")
            raise argparse.ArgumentTypeError(f"unknown {what} {text!r}{extra}")
        return value

    return parse


_engine = _named_choice("engine", ENGINES)


# --framework values and the names users also call them by (NeMo runs Megatron-Core; torchtitan
# and fms-fsdp are PyTorch FSDP training loops; accelerate is the Trainer's launcher).
FRAMEWORK_ALIASES = {"nemo": "megatron-lm", "megatron": "megatron-lm",
                     "megatron-core": "megatron-lm", "torchtitan": "pytorch-fsdp",
                     "fsdp": "pytorch-fsdp", "accelerate": "hf-trainer",
                     "transformers": "hf-trainer", "nanogpt": "torch-compile",
                     "modded-nanogpt": "torch-compile", "nanochat": "torch-compile"}
# The values of costsim.domain.workload.TrainingFramework (spelled out: registering the CLI
# imports no domain module; a test keeps the two equal).
FRAMEWORKS = ("megatron-lm", "pytorch-fsdp", "deepspeed", "hf-trainer", "torch-compile")


_framework = _named_choice("framework", FRAMEWORKS, FRAMEWORK_ALIASES)


def _add_price_args(parser: argparse.ArgumentParser) -> None:
    # A given price makes --cloud meaningless (nothing is looked up): giving both is an error.
    price = parser.add_mutually_exclusive_group()
    price.add_argument("--price-usd-per-gpu-hour", type=range_argtype("--price-usd-per-gpu-hour"),
                       default=None, metavar="USD",
                       help=f"price per GPU-hour, {describe('--price-usd-per-gpu-hour')} "
                            "(default: the cheapest on-demand offering for the job, "
                            "docs/pricing.md)")
    price.add_argument("--cloud", default=None,
                       help=f"look the price up in this cloud only: {' | '.join(CLOUD_NAMES)} "
                            "(default: every cloud)")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``estimate`` with its ``train`` and ``serve`` sub-commands."""
    estimate = commands.add_parser(
        "estimate", help="training time and serving throughput, with cost",
        description="Predict training time, GPU-hours and cost, or serving throughput, latency "
                    "and cost per token, from the performance model.",
        epilog=examples("costsim estimate train --model llama-2-7b --gpus 64 --tokens 2e12",
                        "costsim estimate serve --model llama-3-8b --rate 20"))
    subs = estimate.add_subparsers(dest="estimate_command", metavar="WHAT",
                                   parser_class=OneLineParser)
    subs.required = True

    train = subs.add_parser(
        "train", help="time, GPU-hours and cost of a training run",
        description="Steady step time of the fastest layout that fits, goodput, all-in wall "
                    "time, GPU-hours and cost. Layout flags left out are searched.",
        epilog=examples(
            "costsim estimate train --model llama-2-7b --gpus 64 --tokens 2e12",
            "costsim estimate train --model llama-3-70b --gpu A100 --gpus 512 --tokens 1.5e13 "
            "--tp 8 --pp 4",
            "costsim estimate train --model llama-3-8b --gpus 8 --tokens 1e8 --task finetune "
            "--lora-rank 16 --json",
            "costsim estimate train --model llama-3-8b --gpu H100 --gpus 64 --tokens 1e12 "
            "--seq-len 8192 --profile docs/examples/training/megatron-llama3-8b-64xh100.log"))
    add_model_args(train)
    add_task_arg(train, ("train", "finetune"), "train")
    add_compute_args(train)
    add_training_args(train)
    add_layout_args(train, searched=True)
    add_gpu_arg(train)
    train.add_argument("--tokens", type=range_argtype("--tokens"), required=True,
                       help=f"training tokens, {describe('--tokens')}, e.g. 2e12 (required)")
    train.add_argument("--global-batch", type=range_argtype("--global-batch"), default=None,
                       metavar="SEQS", help=f"sequences per optimizer step, "
                                            f"{describe('--global-batch')} (default: "
                                            f"{DEFAULT_BATCH_HELP}; a batch that leaves over "
                                            "half of each step idle is warned about, naming "
                                            "one that would not)")
    train.add_argument("--global-batch-tokens", type=range_argtype("--global-batch-tokens"),
                       default=None, metavar="TOKENS",
                       help=f"tokens per optimizer step, {describe('--global-batch-tokens')} "
                            "(default: as --global-batch)")
    train.add_argument("--virtual-stages", type=range_argtype("--virtual-stages"), default=None,
                       metavar="V", help="virtual pipeline stages per GPU (interleaved 1F1B; "
                       "must divide the layers per stage; needs --pp), "
                       f"{describe('--virtual-stages')} (default: searched)")
    train.add_argument("--network", default=None,
                       help=f"inter-node network: {' | '.join(NETWORK_NAMES)} (default: by "
                            "GPU, see docs/performance.md)")
    train.add_argument("--framework", type=_framework, default=None,
                       help="training code: megatron-lm (also NeMo; the calibration) | "
                            "pytorch-fsdp (also torchtitan) | deepspeed | hf-trainer (also "
                            "accelerate) | torch-compile (also nanogpt, modded-nanogpt, "
                            "nanochat) (default megatron-lm, or the framework of the "
                            "--profile runs; efficiencies in docs/performance.md)")
    train.add_argument("--framework-year", type=range_argtype("--framework-year"), default=None,
                       metavar="YEAR",
                       help="release year of the training code, "
                            f"{describe('--framework-year')}: 2022 or earlier runs at the "
                            "legacy-era efficiency (default: inferred, legacy for fp16 on "
                            "A100 and for V100; docs/performance.md \"Stack\")")
    train.add_argument("--profile", action="append", default=None, metavar="FILE",
                       help="a measured run of this model on this GPU (repeatable): the "
                            "training run CSV, a Megatron-LM/NeMo or torchtitan log, or HF "
                            "trainer_state.json; a log's model, GPU, count and sequence length "
                            "are this command's flags. A run at this count replaces the "
                            "model's rate (basis measured), one at another count scales by "
                            "the model's ratio (predicted-adjusted); see docs/performance.md "
                            "(default: none, the model alone)")
    train.add_argument("--profile-gpus", type=range_argtype("--gpus"), default=None,
                       metavar="N", help="GPUs of the --profile logs' run, when it ran on "
                                         f"another count than --gpus, {describe('--gpus')} "
                                         "(default: --gpus)")
    _add_price_args(train)
    add_json_flag(train)
    train.set_defaults(handler=_train)

    serve = subs.add_parser(
        "serve", help="serving throughput, latency, replicas and $/token",
        description="Roofline serving model with continuous batching, p95 latency at a load, "
                    "SLO capacity and cost per token.",
        epilog=examples(
            "costsim estimate serve --model llama-3-8b --rate 20",
            "costsim estimate serve --model llama-3-70b --gpu H100 --tp 4 --rate 50 "
            "--slo-ttft-s 1 --slo-tpot-s 0.05",
            "costsim estimate serve --model mistral-7b --gpu L4 --quant int4 --json",
            "costsim estimate serve --model llama-3-8b --gpu H100 --rate 20 "
            "--profile docs/examples/serving_profile.csv"))
    add_model_args(serve)
    add_compute_args(serve)
    add_kv_dtype_arg(serve)
    add_replica_args(serve)
    add_inference_args(serve, serving=True)
    add_gpu_arg(serve)
    serve.add_argument("--engine", type=_engine, default=None,
                       help=f"{' | '.join(ENGINES)} (default vllm)")
    serve.add_argument("--rate", type=range_argtype("--rate"), default=None, metavar="REQ/S",
                       help=f"requests per second to serve, {describe('--rate')} "
                            "(default: none; gives replicas_needed)")
    # The defaults named here are costsim/data/perf_assumptions.csv's (a test keeps them equal;
    # reading the file at parser build time would slow every command's start).
    serve.add_argument("--slo-ttft-s", type=range_argtype("--slo-ttft-s"), default=None,
                       metavar="S",
                       help=f"p95 time-to-first-token SLO in seconds, {describe('--slo-ttft-s')} "
                            "(default: with neither SLO flag, p95 TTFT <= 2 s and TPOT <= 0.1 s, "
                            "MLPerf's interactive server limits)")
    serve.add_argument("--slo-tpot-s", type=range_argtype("--slo-tpot-s"), default=None,
                       metavar="S",
                       help=f"p95 time-per-output-token SLO in seconds, "
                            f"{describe('--slo-tpot-s')} (default: see --slo-ttft-s; either "
                            "flag replaces the whole default SLO)")
    serve.add_argument("--target-utilization", type=range_argtype("--target-utilization"),
                       default=None, metavar="U",
                       help="share of a replica's maximum request rate a sized fleet runs "
                            f"at, {describe('--target-utilization')} (default 0.70, "
                            "Knative/KServe's autoscaler target; see docs/performance.md)")
    add_profile_arg(serve, "a measured serving profile: the serving CSV, `vllm bench serve "
                    "--save-result` JSON or SGLang `bench_serving` JSON lines; what a file "
                    "does not say (GPU, TP, engine, model) is taken from --gpu, --tp, "
                    "--engine, --model as given")
    _add_price_args(serve)
    add_json_flag(serve)
    # None = not given (the help's defaults apply): a benchmark file takes only given flags
    serve.set_defaults(handler=_serve, gpu=None, engine=None)


def lookup_price(gpu: str, gpus: int, cloud: str | None,
                 override: float | None) -> tuple[float, str, list[str]]:
    """(price per GPU-hour, its source, warnings): the override, else the cheapest on-demand
    offering for one job on ``gpus`` GPUs (docs/pricing.md rule, whole multi-GPU instances; see
    :meth:`costsim.catalog.prices.PriceBook.cheapest_offering_for_job`)."""
    if override is not None:
        return override, "--price-usd-per-gpu-hour", []
    from costsim.catalog.prices import cheapest_offering_for_job
    from costsim.domain.gpu import GPUS_PER_NODE
    from costsim.domain.pricing import PurchaseOption
    from costsim.errors import InfeasibleError

    try:
        selection = cheapest_offering_for_job(gpu, gpus, PurchaseOption.ON_DEMAND, cloud=cloud)
    except InfeasibleError as exc:
        return 0.0, "", [f"no on-demand price for {gpu}: {exc}; cost reported as 0 (use "
                         "--price-usd-per-gpu-hour)"]
    warnings: list[str] = []
    wanted = min(gpus, GPUS_PER_NODE)
    if selection.offering.gpus_per_instance < wanted:
        warnings.append(
            f"no on-demand {gpu} instance holds {wanted} GPUs; priced as "
            f"{selection.offering.gpus_per_instance}-GPU instances, whose interconnect is "
            "slower than the model assumes"
        )
    quote = selection.quote
    source = f"{selection.offering.key} on-demand, {quote.source}, {quote.effective_date}"
    return quote.price_usd_per_gpu_hour, source, warnings


def _train(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from costsim.catalog.perf_defaults import get_network, perf_defaults
    from costsim.cli.estimate_report import print_train, training_payload
    from costsim.cli.layout_args import (
        build_training_setup,
        read_layout_flags,
        resolve_model_gpu_task,
    )
    from costsim.cli.result_checks import check_training_result
    from costsim.domain.workload import ParallelLayout, Task, TrainingFramework
    from costsim.perf.train_estimate import LayoutConstraints, estimate_training_run

    name, arch, gpu, task = resolve_model_gpu_task(args)
    if task is Task.INFER:
        raise InputError("", "--task", "estimate train needs train or finetune (got infer)")
    flags = read_layout_flags(args)
    gpus = flags.gpus
    if gpus is None:
        if None in (flags.tp, flags.pp, flags.dp):
            raise InputError("", "--gpus", "is required unless --dp, --tp and --pp are all "
                                           "given")
        gpus = (flags.tp or 1) * (flags.pp or 1) * (flags.dp or 1)
    # The memory-style setup carries task, precision, optimizer, LoRA and sequence length;
    # the search replaces its layout. Build it on a one-GPU layout so that it always validates.
    probe = argparse.Namespace(**{**vars(args), "tp": None, "pp": None, "dp": None,
                                  "gpus": None, "zero": None})
    base = build_training_setup(probe, arch, gpu, task)
    profiles = _read_profiles(args, name, arch, gpu.name, gpus)
    framework = args.framework or _profile_framework(profiles) or "megatron-lm"
    base = replace(base, layout=ParallelLayout(), framework=TrainingFramework(framework),
                   framework_year=args.framework_year)
    global_seqs = args.global_batch  # >= 1: checked by its argparse type
    if flags.grad_accum is not None and (global_seqs is not None
                                         or args.global_batch_tokens is not None):
        # grad_accum = global batch / (micro_batch · dp): giving both over-determines it.
        raise InputError("", "--grad-accum", "give --grad-accum or a global batch "
                                             "(--global-batch / --global-batch-tokens), not both "
                                             f"(got --grad-accum {flags.grad_accum})")
    if args.global_batch_tokens is not None:
        if global_seqs is not None:
            raise InputError("", "--global-batch-tokens", "give --global-batch or "
                                                          "--global-batch-tokens, not both")
        global_seqs = max(1, round(args.global_batch_tokens / base.seq_len))
        most = int(FLAG_RANGES["--global-batch"].maximum)
        if global_seqs > most:  # the --global-batch range, in tokens
            raise InputError("", "--global-batch-tokens",
                             f"must be at most {most:,} sequences of {base.seq_len} tokens "
                             f"(got {args.global_batch_tokens:g})")
    fixed = LayoutConstraints(tp=flags.tp, pp=flags.pp, dp=flags.dp, zero=flags.zero,
                              sp=flags.sp, virtual_stages=args.virtual_stages,
                              micro_batch=flags.micro_batch,
                              grad_accum=flags.grad_accum, recompute=flags.recompute,
                              global_batch_seqs=global_seqs)
    defaults = perf_defaults()
    network = get_network(args.network) if args.network else None
    price, source, price_warnings = lookup_price(gpu.name, gpus, args.cloud,
                                                 args.price_usd_per_gpu_hour)
    est = estimate_training_run(arch, gpu, gpus, args.tokens, base, fixed, defaults=defaults,
                                price_usd_per_gpu_hour=price, network=network)
    if profiles:
        from costsim.perf.measured_training import apply_measurements

        est = apply_measurements(est, profiles, arch=arch, gpu=gpu, base=base,
                                 defaults=defaults, network=network)
        if est.profile_source == "":
            price_warnings.append(
                f"--profile: no measured run of {name} on {gpu.name} with {base.framework.value}"
                f" in {base.precision.value}, full training: the rate is the model's")
    check_training_result(est)
    return _emit(args, training_payload(est, name, source, price_warnings), print_train)


def _read_profiles(args: argparse.Namespace, name: str, arch: Any, gpu: str,
                   gpus: int) -> tuple[Any, ...]:
    """The measured runs of ``--profile``; what a log does not say is this command's run."""
    if not args.profile:
        return ()
    from pathlib import Path

    from costsim.catalog.training_profiles import read_training_profile
    from costsim.domain.measurements import RunDetails

    details = RunDetails(model=name, architecture=arch, gpu=gpu, gpus=args.profile_gpus or gpus,
                         seq_len=args.seq_len, precision=args.precision,
                         framework=args.framework)
    return tuple(p for file in args.profile
                 for p in read_training_profile(Path(file), details))


def _profile_framework(profiles: tuple[Any, ...]) -> str | None:
    """The one framework the measured runs used (None: none named, or several)."""
    named = {p.framework.value for p in profiles if p.framework is not None}
    return named.pop() if len(named) == 1 else None


def _emit(args: argparse.Namespace, payload: dict[str, Any],
          print_table: Callable[[dict[str, Any]], None]) -> int:
    """Write ``payload`` as JSON (``--json``) or as the command's table; exit code 0."""
    if args.json:
        print_json(payload)
    else:
        print_table(payload)
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from costsim.catalog.perf_defaults import perf_defaults
    from costsim.cli.estimate_report import print_serve, serving_payload
    from costsim.cli.layout_args import (
        resolve_architecture,
        resolve_gpu,
        resolve_precision,
        resolve_request_tokens,
    )
    from costsim.domain.measurements import Basis
    from costsim.domain.precision import Dtype
    from costsim.domain.workload import Quant, ServingEngine
    from costsim.perf.quant_advice import (
        QuantCandidate,
        estimate_with_advice,
        quantization_candidates,
    )
    from costsim.perf.serving import (
        ServingEstimate,
        check_generative,
        estimate_serving,
        with_price,
    )

    name, arch = resolve_architecture(args)
    gpu = resolve_gpu(args)
    if args.tp is not None and args.gpus is not None and args.tp != args.gpus:
        raise InputError("", "--gpus", f"a replica's GPUs are its TP degree: give --tp or "
                                       f"--gpus, or equal values (got --gpus {args.gpus}, "
                                       f"--tp {args.tp})")
    precision = resolve_precision(args, gpu)
    check_generative(arch)
    prompt, output = resolve_request_tokens(args, arch)
    tp = args.tp
    if tp is None and args.gpus is not None:
        tp = args.gpus
    defaults = perf_defaults()
    kv_dtype = Dtype(args.kv_dtype) if args.kv_dtype else None
    quant = Quant(args.quant or "none")

    engine = ServingEngine(args.engine or "vllm")
    points = _serving_profiles(args)
    if points and tp is None:
        from costsim.perf.measured_serving import matching_points, measured_tp

        tp = measured_tp(matching_points(
            points, arch=arch, model=name, gpu=gpu.name, engine=engine, precision=precision,
            default_precision=gpu.default_precision, quant=quant, tp=None))

    def estimate(candidate: QuantCandidate, sizes: tuple[int, int] = (prompt, output),
                 replica_tp: int | None = tp) -> ServingEstimate:
        return estimate_serving(
            arch, gpu, engine=engine, precision=candidate.precision,
            quant=candidate.quant, kv_dtype=candidate.kv_dtype, prompt_tokens=sizes[0],
            output_tokens=sizes[1], batch=args.batch or 1, tp=replica_tp,
            rate_requests_per_s=args.rate, slo_ttft_s=args.slo_ttft_s,
            slo_tpot_s=args.slo_tpot_s, price_usd_per_gpu_hour=0.0,
            assumptions=defaults.serving, context_tokens=args.context,
            target_utilization=args.target_utilization)

    chosen = QuantCandidate(precision=precision, quant=quant, kv_dtype=kv_dtype, flags="")
    est, advice = estimate_with_advice(
        estimate, chosen, quantization_candidates(gpu, precision, quant, kv_dtype))
    if args.profile:
        from costsim.perf.measured_serving import with_measurements
        from costsim.perf.serving import latency_at_rate

        predicted = est
        est = with_measurements(
            replace(est, model=name), points, arch=arch, default_precision=gpu.default_precision,
            predict=lambda p, o: estimate(chosen, (p, o), predicted.gpus_per_replica),
            latency=lambda rate: latency_at_rate(arch, gpu, predicted, defaults.serving, rate,
                                                 context_tokens=args.context))
        if est.basis is not Basis.PREDICTED and advice:
            advice = tuple(f"{line} (the model's figures: the profile measured only the "
                      "configuration asked for)" for line in advice)
    # Priced after the estimate: the replica size decides how many GPUs the lookup asks for.
    price, source, price_warnings = lookup_price(gpu.name, est.gpus_per_replica, args.cloud,
                                                 args.price_usd_per_gpu_hour)
    if price:
        est = with_price(est, price)
    return _emit(args, serving_payload(est, name, source, price_warnings, advice), print_serve)


def _serving_profiles(args: argparse.Namespace) -> tuple[Any, ...]:
    """The measured points of every ``--profile`` file (the flags given fill what a file does
    not say)."""
    if not args.profile:
        return ()
    from costsim.catalog.serving_profiles import read_serving_profile
    from costsim.domain.measurements import ServingFileContext

    context = ServingFileContext(
        model=args.model or (str(args.arch.resolve()) if args.arch else None), gpu=args.gpu,
        tp=args.tp if args.tp is not None else args.gpus, engine=args.engine,
        precision=args.precision, quant=args.quant if args.quant != "none" else None)
    return tuple(p for file in args.profile for p in read_serving_profile(file, context))
