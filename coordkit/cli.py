"""The `coordkit` command line: list the reproducible paper figures, reproduce one headless, record an LLM run,
check the papers' claims against the kit, and run one model with the parameters it declares.

    coordkit list
    coordkit reproduce rep-beer-fig1 --out out/ --seeds 5 --format svg
    coordkit reproduce rep-beer-fig1 --seeds 1 --replay data/recordings/rep-beer-fig1.jsonl
    coordkit record rep-beer-fig1 --seeds 1 --budget-usd 1.00
    coordkit claims --paper rep --markdown claims.md   # the papers' claims, decided from the kit's figures
    coordkit models
    coordkit run beer-game --protocol a2a --stages 6 --seed 3 --out out/
    coordkit run beer-game --help      # every parameter, its range, default, unit and meaning
"""

import argparse
import os
import re
import runpy
import shlex
import sys
from pathlib import Path

from coordkit import catalogue, engines, figures
from coordkit.outputs import atomic, writable_file, writable_folder
from coordkit.replication import PAPERS

STAND_IN_MODEL = "coordkit-stand-in (rules, not an LLM)"
MAX_SEEDS = 10_000  # per configuration: more is a typo, or a job for sweep() and a cluster
WORKERS_HELP = f"processes or Dask workers, {engines.WORKERS_PER_CPU} per CPU at most (default: one per CPU)"
ARGPARSE_NEGATIVE = re.compile(r"-\d+|-\d*\.\d+")  # the negative numbers argparse itself reads as values


def main(argv: list[str] | None = None) -> int:
    argv = _negative_values_joined(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"] and len(argv) > 1 and not argv[1].startswith("-"):
        return run_model(argv[1], argv[2:])
    args = _parser().parse_args(argv)
    args.argv = argv
    try:
        return args.command(args)
    except (KeyError, ValueError, FileNotFoundError, engines.WorkerLost, *_layer_errors()) as error:  # on failure only
        print(f"coordkit: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2


def _negative_values_joined(argv: list[str]) -> list[str]:
    """``argv`` with each negative number argparse would take for an option ("-inf", "-1e-3") joined to the option
    before it ("--holding-cost=-inf"), so that the option's own check refuses it by name instead of argparse
    saying "expected one argument"."""
    joined: list[str] = []
    for word in argv:
        if joined and _takes_a_value(joined[-1]) and _misread_negative(word):
            joined[-1] = f"{joined[-1]}={word}"
        else:
            joined.append(word)
    return joined


def _takes_a_value(word: str) -> bool:
    """An option written without its value ("--out", not "--out=x"; not "--" nor "--help")."""
    return word.startswith("--") and "=" not in word and word not in ("--", "--help")


def _misread_negative(word: str) -> bool:
    """A negative number outside argparse's own pattern (which reads "-1" and "-0.5" as values, not "-inf")."""
    if not word.startswith("-") or ARGPARSE_NEGATIVE.fullmatch(word):
        return False
    try:
        float(word)
    except ValueError:
        return False
    return True


def _layer_errors() -> tuple[type[Exception], ...]:
    """The LLM layer's error and a sweep's (runs failed), imported only when a command fails: the commands that
    list things never load those layers."""
    from coordkit.llm.base import LLMError
    from coordkit.sweeps import SweepError

    return LLMError, SweepError


def list_figures(args: argparse.Namespace) -> int:
    for figure in catalogue.figures().values():
        print(f"{figure.id:<20} {'LLM' if figure.llm_agents else '   '} {figure.description}")
    print("\nLLM: the figure's agents can be LLMs (coordkit record ID; coordkit reproduce ID --replay FILE)")
    return 0


def list_models(args: argparse.Namespace) -> int:
    for name, model in catalogue.models().items():
        print(f"{name:<18} {model.module:<28} {model.description.partition('\n')[0]}")
    print("\n`coordkit run MODEL --help` lists a model's parameters.")
    return 0


def run_model(name: str, argv: list[str]) -> int:
    """Play one model with parameters from the command line; print its summary, write its frame as CSV."""
    known = catalogue.models()
    if name not in known:
        print(f"coordkit: no model {name!r}; `coordkit models` lists them: {', '.join(known)}", file=sys.stderr)
        return 2
    args = _model_parser(known[name]).parse_args(argv)
    model = known[name].load()
    given = {name: text for name, text in vars(args).items() if name in model.parameters and text is not None}
    try:
        if getattr(args, "policies", None):
            _register_from(args.policies)
        values = {n: _parsed(model.parameters[n], text, model) for n, text in given.items()}
        out = writable_folder(args.out)
        played = model(**values, rng=args.seed).run()
    except ValueError as error:  # a ParameterError, or a destination that cannot be written
        print(f"coordkit: {error}", file=sys.stderr)
        return 2
    with atomic(out / f"{name}.csv") as csv:
        played.frame().to_csv(csv, index=False)
    for key, value in played.summary().items():
        print(f"{key:<24} {value}")
    print(f"\nwrote {name}.csv (one row per step) to {out}/")
    return 0


def _register_from(path: str) -> None:
    """Run the student's file ``path``, whose ``register_policy`` calls add policy names (a ValueError if absent)."""
    if not Path(path).is_file():
        raise ValueError(f"--policies {path}: no such file; give the Python file that calls coordkit.register_policy")
    runpy.run_path(path, run_name="coordkit_policies")


def _parsed(param, text: str, model: type | None = None):
    """The parameter's value from its option's text, or a ValueError that names the option as it was typed."""
    try:
        return param.parse(text, model)
    except ValueError as error:  # a ParameterError: "holding_cost=-inf is not a finite number: ..."
        names = "; --policies FILE adds the names a file registers" if param.type_name() == "policy" else ""
        raise ValueError(f"argument {_option(param.name)}: {error}{names}") from None


def _option(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def _model_parser(model: catalogue.ModelEntry) -> argparse.ArgumentParser:
    """The options of ``coordkit run MODEL``, from the catalogue's words: ``--help`` imports no model."""
    parser = argparse.ArgumentParser(prog=f"coordkit run {model.id}", description=model.description)
    for param in model.parameters:
        if param.kind == "object":
            continue  # objects (an LLM client, a persona) are set from Python
        unit = f" [{param.unit}]" if param.unit else ""
        none = f"; none: {param.optional}" if param.optional else ""
        parser.add_argument(
            _option(param.name),
            dest=param.name,
            metavar="VALUE",
            help=_literal(f"{param.doc}{unit}: {param.allowed}{none} (default: {param.default})"),
        )
    parser.add_argument("--seed", type=_seed, default=0, help="the model's seed, a whole number from 0 (default: 0)")
    parser.add_argument("--out", default="out", help="folder for the frame's CSV (default: out/)")
    if any(param.kind == "policy" for param in model.parameters):
        parser.add_argument(
            "--policies",
            metavar="FILE",
            help="a Python file of your own whose coordkit.register_policy calls add names the policy options take "
            "(it runs in this process)",
        )
    return parser


def _seed(text: str) -> int:
    """A seed from the command line: a whole number from 0 (argparse's error names the option)."""
    if not text.strip().isdecimal():
        raise argparse.ArgumentTypeError(f"{text} is not a seed: give a whole number from 0, e.g. 0")
    return int(text)


def _literal(text: str) -> str:
    """``text`` for argparse, which reads ``%`` in help as a format directive ("a 30% sparse network")."""
    return text.replace("%", "%%")


def reproduce(args: argparse.Namespace) -> int:
    """Compute a figure and write it; with ``--replay``, exit 1 (after writing) if any request was not replayed."""
    from coordkit.llm import Ledger, MeteredClient, ReplayClient

    seeds = _seeds(args, figures.entry(args.figure))  # what can be checked is, before an engine or a figure loads
    _check_workers(args.workers)
    writable_folder(args.figures_out)
    if not args.replay:
        _write(*_compute_on(args.engine, args.workers, args.figure, seeds, args.base_seed, args.fresh), seeds, args)
        return 0
    figure = figures.get(args.figure)
    _require_llm(figure)
    if args.engine != "serial":
        raise ValueError(f"--engine {args.engine} cannot replay: the replay runs in this process; drop --engine")
    ledger, replay = Ledger(), ReplayClient(args.replay, run=figure.id)
    data = figure.compute(seeds, args.base_seed, llm=MeteredClient(replay, ledger))
    print(f"replayed {args.replay}:\n{ledger}\n")
    _write(figure, data, seeds, args)
    if replay.misses:
        print(
            f"\ncoordkit: WARNING: {replay.misses} of {replay.misses + replay.hits} requests were not in "
            f"{args.replay}; those decisions fell back to rules, so this is not a faithful replay. "
            f"Record the run again: coordkit record {figure.id}",
            file=sys.stderr,
        )
        return 1
    return 0


def claims(args: argparse.Namespace) -> int:
    """Compute the replication ledger and print it; write it as Markdown, or keep it in data/ledger.csv."""
    from coordkit.replication import ledger, report

    if args.seeds is not None and not 1 <= args.seeds <= MAX_SEEDS:
        raise ValueError(f"--seeds {args.seeds}: use 1 to {MAX_SEEDS:,} seeds (default: each figure's own)")
    _check_workers(args.workers)
    defaults = args.paper is None and args.seeds is None and args.base_seed == 0
    if args.write and not defaults:
        raise ValueError("--write keeps the whole ledger at the defaults: drop --paper, --seeds and --base-seed")
    markdown = writable_file(args.markdown, "--markdown") if args.markdown else None
    engine = engines.resolve(args.engine, args.workers)
    with engines.running(engine):
        entries = ledger.compute(args.paper, args.seeds, args.base_seed, fresh=args.fresh)
    print(report.text(entries))
    if markdown is not None:
        command = "coordkit " + shlex.join(args.argv)
        with atomic(markdown) as file:
            file.write_text(report.markdown(entries, command, markdown), encoding="utf-8")
        print(f"\nwrote the report to {markdown}")
    if args.write:
        with atomic(ledger.FILE) as file:
            ledger.kept(entries).to_csv(file, index=False)
        print(f"\nkept the ledger in {ledger.FILE}")
    if defaults:
        changed = [e.claim.id for e in entries if e.decision.verdict != e.claim.expected]
        if changed:
            print(
                f"\ncoordkit: {len(changed)} verdict(s) differ from the expected column of data/papers/claims.csv: "
                f"{', '.join(changed)}. Explain each change and update the column in the same commit.",
                file=sys.stderr,
            )
    return 0


def record(args: argparse.Namespace) -> int:
    """Run a figure with LLM agents, recording every call for replay, within a budget."""
    from coordkit.llm import Ledger, MeteredClient, RecordingClient, ScriptedClient
    from coordkit.llm.anthropic_client import AnthropicClient
    from coordkit.llm.base import StopRun
    from coordkit.llm.ledger import check_budget, unpriced
    from coordkit.llm.session import recording_path

    figure = figures.get(args.figure)
    _require_llm(figure, stand_in=args.stand_in)
    check_budget(args.budget_usd)
    seeds = _seeds(args, figure)
    out = writable_file(args.out, "--out") if args.out is not None else recording_path(figure.id)
    writable_folder(args.figures_out, "--figures-out")
    source = ScriptedClient(figure.stand_in, model=STAND_IN_MODEL) if args.stand_in else AnthropicClient(args.model)
    command = "coordkit " + shlex.join(sys.argv[1:] if args.argv is None else args.argv)
    note = "a rule-based stand-in answering in the prompts' format, NOT an LLM" if args.stand_in else ""
    ledger = Ledger(prices={source.default_model: tuple(args.price)} if args.price else None)
    if source.billable and ledger.prices.get(source.default_model) is None:
        raise ValueError(unpriced(source.default_model))
    recorder = RecordingClient(source, out, run=figure.id, command=command, note=note)
    try:
        data = figure.compute(seeds, args.base_seed, llm=MeteredClient(recorder, ledger, args.budget_usd))
    except StopRun as stop:
        print(f"coordkit: {stop.headline}: {stop}\nThe calls made so far are in {out}.\n{ledger}", file=sys.stderr)
        return 1
    finally:
        recorder.close()
    print(f"recorded {ledger.calls + ledger.failed} calls to {out}\n{ledger}\n")
    _write(figure, data, seeds, args)
    return 0


def _compute_on(name: str, workers: int | None, figure_id: str, seeds: int, base_seed: int, fresh: bool = False):
    """The figure and its data, with every sweep inside it on the engine ``name`` (every figure's trials go
    through sweep: tests/test_contract_engines.py); read from the figure cache when this kit computed it before
    (:mod:`coordkit.figure_cache`), unless ``fresh``. The engine comes first, so that a scheduler that cannot be
    reached is said in seconds, before the figure's family is imported."""
    from coordkit import figure_cache

    engine = engines.resolve(name, workers)
    with engines.running(engine):
        figure = figures.get(figure_id)
        return figure, figure_cache.computed(figure, seeds, base_seed, fresh=fresh)


def _require_llm(figure: figures.Figure, stand_in: bool = False) -> None:
    if not figure.llm_agents:
        llm = [f.id for f in catalogue.figures().values() if f.llm_agents]
        raise ValueError(f"{figure.id} has no LLM agents; figures with LLM agents: {', '.join(llm)}")
    if stand_in and figure.stand_in is None:
        raise ValueError(f"{figure.id} has no rule-based stand-in: record it with a key (ANTHROPIC_API_KEY)")


def _seeds(args: argparse.Namespace, figure: "figures.Figure | catalogue.FigureEntry") -> int:
    seeds = figure.default_seeds if args.seeds is None else args.seeds
    if not 1 <= seeds <= MAX_SEEDS:
        raise ValueError(
            f"--seeds {seeds}: use 1 to {MAX_SEEDS:,} seeds ({figure.id} plays {figure.default_seeds} by default)"
        )
    return seeds


def _check_workers(workers: int | None) -> None:
    """Refuse ``--workers`` outside 1 to :func:`coordkit.engines.max_workers`, naming the option."""
    if workers is not None and not 1 <= workers <= engines.max_workers():
        raise ValueError(
            f"--workers {workers}: use 1 to {engines.max_workers():,} worker processes ({engines.WORKERS_PER_CPU} "
            f"per CPU of this machine's {os.cpu_count() or 1}; default: one per CPU)"
        )


def _write(figure: figures.Figure, data, seeds: int, args: argparse.Namespace) -> None:
    """The figure's CSV and chart, each written whole (another run writing the same folder cannot tear them)."""
    from coordkit import viz

    out = writable_folder(args.figures_out)
    with atomic(out / f"{figure.id}.csv") as csv:
        data.to_csv(csv, index=False)
    viz.setup()
    with atomic(out / f"{figure.id}.{args.format}") as chart:
        viz.save(figure.chart(data), chart)
    print(f"{figure.id}: {figure.description}")
    written = f"{figure.id}.csv and {figure.id}.{args.format}"
    print(f"{seeds} seed(s) from base seed {args.base_seed}; wrote {written} to {out}/")
    print()
    print(figure.compare(data).to_string(index=False))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coordkit", description="Reproduce the coordination papers' figures.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    listing = commands.add_parser("list", help="every reproducible paper figure, with its id")
    listing.set_defaults(command=list_figures)
    listing = commands.add_parser("models", help="every model, with its id for `coordkit run`")
    listing.set_defaults(command=list_models)
    commands.add_parser("run", help="play one model: coordkit run MODEL [--PARAMETER VALUE ...] (see MODEL --help)")
    run = commands.add_parser("reproduce", help="regenerate a figure's data (CSV) and chart, and compare")
    _figure_options(run)
    run.add_argument("--replay", metavar="FILE", help="play the LLM agents from this recording (offline, free)")
    run.add_argument(
        "--engine",
        choices=engines.ENGINES,
        default="serial",
        help="where the figure's sweeps run: here, local processes, or Dask (a local cluster, or the one at "
        f"${engines.SCHEDULER_VARIABLE}); default: serial",
    )
    run.add_argument("--workers", type=int, default=None, help=WORKERS_HELP)
    run.set_defaults(command=reproduce)
    run.add_argument("--fresh", action="store_true", help="compute the figure again, not from the figure cache")
    ledger = commands.add_parser("claims", help="the papers' headline claims, each decided from the kit's figures")
    ledger.add_argument("--paper", choices=PAPERS, default=None, help="one paper's claims (default: all)")
    ledger.add_argument("--seeds", type=int, default=None, help="seeds for every figure (default: each figure's own)")
    ledger.add_argument(
        "--base-seed", type=_seed, default=0, help="seed the per-run seeds are derived from (default: 0)"
    )
    ledger.add_argument("--markdown", metavar="FILE", default=None, help="also write the ledger as a Markdown report")
    ledger.add_argument(
        "--write", action="store_true", help="keep the ledger in data/ledger.csv (all papers, defaults)"
    )
    ledger.add_argument("--fresh", action="store_true", help="compute every figure again, not from the figure cache")
    ledger.add_argument(
        "--engine",
        choices=engines.ENGINES,
        default="serial",
        help="where the figures' sweeps run: here, local processes, or Dask (default: serial)",
    )
    ledger.add_argument("--workers", type=int, default=None, help=WORKERS_HELP)
    ledger.set_defaults(command=claims)
    rec = commands.add_parser("record", help="run a figure with LLM agents and record every call for replay")
    _figure_options(rec, figures_out="out")
    rec.add_argument("--out", default=None, help="the recording (default: data/recordings/ID.jsonl)")
    rec.add_argument("--budget-usd", type=float, default=1.0, help="stop before spending more (default: 1.00)")
    rec.add_argument("--model", default=None, help="Claude model (default: $COORDKIT_MODEL or a current Haiku)")
    rec.add_argument(
        "--price",
        nargs=2,
        type=float,
        metavar=("INPUT", "OUTPUT"),
        help="the model's dollars per million input and output tokens, if data/llm_prices.csv lacks it",
    )
    rec.add_argument("--stand-in", action="store_true", help="record the rule-based stand-in instead (no key)")
    rec.set_defaults(command=record)
    return parser


def _figure_options(parser: argparse.ArgumentParser, figures_out: str | None = None) -> None:
    parser.add_argument("figure", metavar="ID", help="a figure id from `coordkit list`")
    if figures_out is None:
        parser.add_argument(
            "--out", dest="figures_out", default="out", help="folder for the CSV and the chart (default: out/)"
        )
    else:
        parser.add_argument(
            "--figures-out", default=figures_out, help="folder for the CSV and the chart (default: out/)"
        )
    parser.add_argument("--seeds", type=int, default=None, help="games per configuration (default: the figure's)")
    parser.add_argument(
        "--base-seed", type=_seed, default=0, help="seed the per-game seeds are derived from, a whole number from 0"
    )
    parser.add_argument("--format", choices=("svg", "png"), default="svg", help="chart format (default: svg)")


if __name__ == "__main__":
    sys.exit(main())
