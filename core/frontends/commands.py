"""What each `breadth` subcommand does, given parsed arguments, with rich progress bars."""

from __future__ import annotations

import signal
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from ..world.files import check_output, write_json
from ..world.header import read_header
from ..world.mix import Mix
from ..world.paths import BASE, default_base_out
from ..world.presets import PRESETS
from ..world.probe import parse_sum
from ..world.records import RunMeta
from ..world.settings import FinetuneSettings, PretrainSettings, held_out_from_text
from .cli import finetune_settings
from .tables import episode_json, episode_lines, episode_text, plate_table, scores_table

console = Console(highlight=False)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def pretrain(args) -> int:
    """Pre-train the base model on worksheets and save it."""
    import torch

    from ..learning import checkpoint
    from ..learning.evaluate import worksheet_accuracy
    from ..learning.model import GPT, GPTConfig
    from ..learning.train import pretrain as run_pretrain
    from ..learning.train import use_one_thread

    given = {"steps": args.steps, "seed": args.seed}
    settings = PretrainSettings.from_text(**{k: v for k, v in given.items() if v is not None})
    out = check_output(args.out or default_base_out())
    use_one_thread()
    torch.manual_seed(settings.seed)
    model = GPT(GPTConfig())
    console.print(f"pre-training a {model.num_params():,}-parameter model on single-digit worksheets")
    start = time.perf_counter()
    with _progress() as bar:
        task = bar.add_task("pretrain", total=settings.steps, loss=float("nan"))
        losses = run_pretrain(settings, model, lambda s: bar.update(task, completed=s.step, loss=s.loss))
    seconds = time.perf_counter() - start
    acc = worksheet_accuracy(model)
    checkpoint.save(
        model, RunMeta("pretrain", settings, losses=tuple(losses), train_seconds=seconds, worksheet_accuracy=acc), out
    )
    console.print(f"final loss {losses[-1]:.3f}, worksheet sums right: {acc:.0%} of 100, {seconds:.1f} s; wrote {out}")
    return 0


def train(args) -> int:
    """Fine-tune on a mix, evaluate, save."""
    from ..learning import checkpoint
    from ..learning.experiment import finetune_run

    mix = Mix.parse(args.mix)
    settings = finetune_settings(args, args.seed)
    base = args.base or BASE
    read_header(base)  # fail fast on a bad base
    check_output(args.out, inputs=[base])  # and on an output that cannot be written, before training
    with _progress() as bar:
        task = bar.add_task(mix.label(), total=settings.steps, loss=float("nan"))
        model, record = finetune_run(
            mix, settings, base, on_step=lambda s: bar.update(task, completed=s.step, loss=s.loss)
        )
    checkpoint.save(model, record, args.out)
    console.print(scores_table(record.scores, f"{mix.label()}, seed {settings.seed}: held-out"))
    console.print(f"fine-tune {record.train_seconds:.1f} s, evaluation {record.eval_seconds:.2f} s; wrote {args.out}")
    return 0


def evaluate(args) -> int:
    """Score a checkpoint on held-out sums."""
    from ..learning import checkpoint
    from ..learning.evaluate import evaluate as run_eval
    from ..learning.train import use_one_thread

    held_out = held_out_from_text(args.held_out)
    seed = None if args.seed is None else FinetuneSettings.from_text(seed=args.seed).seed
    if args.json:
        check_output(args.json, inputs=[args.checkpoint])  # fail before evaluating, not after
    use_one_thread()
    model, header = checkpoint.load(args.checkpoint)
    seed = seed if seed is not None else header.run.seed or 0
    start = time.perf_counter()
    scores, scored = run_eval(model, seed, held_out)
    seconds = time.perf_counter() - start
    console.print(scores_table(scores, f"{args.checkpoint.name}: held-out sums of seed {seed}"))
    console.print(f"{sum(s.total for s in scores.values())} episodes in {seconds:.2f} s")
    if args.json:
        write_json(
            args.json,
            {
                "checkpoint": str(args.checkpoint),
                "seed": seed,
                "held_out": held_out,
                "scores": {n: s.to_dict() for n, s in scores.items()},
                "episodes": [episode_json(s) for s in scored],
            },
        )
        console.print(f"wrote {args.json}")
    return 0


def play(args) -> int:
    """Play one sum and print who wrote what."""
    from ..learning import checkpoint
    from ..learning.policy import greedy
    from ..learning.train import use_one_thread
    from ..world.scoring import play as run_play

    problem = parse_sum(args.sum)
    use_one_thread()
    model, _ = checkpoint.load(args.checkpoint)
    (scored,) = run_play(greedy(model), [problem], max_length=model.config.block_size)
    console.print(episode_text(scored.episode.transcript))
    for line in episode_lines(scored.episode.transcript):
        console.print(line)
    verdict = scored.verdict
    family = problem.family or "outside both families"
    mark = ("correct", "bold green") if verdict.solved else (f"wrong: {verdict.describe()}", "bold red")
    console.print(Text.assemble("verdict: ", mark, f"  (true sum {problem.answer}; {family})"))
    return 0


def plate(args) -> int:
    """The plate's three mixes on each seed, in parallel processes."""
    read_header(BASE)  # fail fast, before starting processes
    held_out = held_out_from_text(args.held_out)
    seeds = [finetune_settings(args, seed).seed for seed in args.seeds]
    settings = finetune_settings(args)
    if args.json:
        check_output(args.json, inputs=[BASE])
    jobs = [(name, seed) for seed in seeds for name in PRESETS]
    records: dict[tuple[str, int], RunMeta] = {}
    start = time.perf_counter()
    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )
    pool = ProcessPoolExecutor(args.workers, initializer=_ignore_interrupts)
    try:
        with bar:
            task = bar.add_task(f"{len(jobs)} fine-tunes", total=len(jobs))
            futures = {
                pool.submit(_plate_job, name, replace(settings, seed=seed), held_out): (name, seed)
                for name, seed in jobs
            }
            for fut in as_completed(futures):
                records[futures[fut]] = fut.result()
                bar.advance(task)
    except BaseException:  # Ctrl-C (or a failed run): stop the workers now instead of waiting for their runs
        _terminate(pool)
        raise
    pool.shutdown()
    wall = time.perf_counter() - start
    console.print(plate_table(records, seeds, held_out))
    console.print(f"settings: {', '.join(f'{k} {v}' for k, v in settings.to_dict().items() if k != 'seed')}")
    secs = [r.train_seconds + r.eval_seconds for r in records.values()]
    console.print(
        f"{len(jobs)} runs on {args.workers} processes in {wall:.1f} s; one run (fine-tune + "
        f"evaluation) took {min(secs):.1f}-{max(secs):.1f} s, mean {sum(secs) / len(secs):.1f} s"
    )
    if args.json:
        write_json(
            args.json,
            {
                "settings": settings.to_dict(),
                "held_out": held_out,
                "wall_seconds": round(wall, 2),
                "runs": [{"preset": n, **_run_json(records[(n, s)])} for n, s in jobs],
            },
        )
        console.print(f"wrote {args.json}")
    return 0


def _run_json(run: RunMeta) -> dict:
    """A run as the plate's JSON keeps it: the record without its loss curve."""
    return {k: v for k, v in run.to_dict().items() if k != "losses"}


def _ignore_interrupts() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it stops the workers), not a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a pool's workers at once and drop its queued jobs."""
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _plate_job(name: str, settings: FinetuneSettings, held_out: int | None) -> RunMeta:
    from ..learning.experiment import finetune_run

    _, record = finetune_run(PRESETS[name].mix, settings, BASE, held_out)
    return record
