"""What each `breadth` subcommand does, given parsed arguments; rich tables and progress bars."""

from __future__ import annotations

import time
from dataclasses import replace
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from .checkpoint import CheckpointError
from .experiment import BASE, RunRecord, finetune_run
from .families import FAMILIES
from .mix import PRESET_LABELS, PRESETS, Mix
from .stats import mean_sd, wilson
from .settings import FinetuneSettings, PretrainSettings

console = Console(highlight=False)
ROLE_STYLE = {"prompt": "bold", "action": "bold cyan", "environment": "bold black on yellow"}
ROLE_NAME = {"prompt": "prompt", "action": "model", "environment": "calculator"}
PLATE = {  # the plate's published held-out success, % (two-digit, three-digit)
    "two_digit": (100, 0), "three_digit": (0, 93), "mix": (30, 83),
}


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=console, transient=False)


def _check_writable(path: Path) -> None:
    if path.exists() and path.is_dir():
        raise CheckpointError(f"{path}: is a directory")


def pretrain(args) -> int:
    """Pre-train the base model on worksheets and save it."""
    from . import checkpoint
    from .evaluate import worksheet_accuracy
    from .model import GPT, GPTConfig
    from .train import pretrain as run_pretrain
    from .train import use_one_thread
    from .vocab import VOCAB_SIZE

    import torch

    out = args.out or BASE
    _check_writable(out)
    use_one_thread()
    settings = PretrainSettings(steps=args.steps, seed=args.seed)
    torch.manual_seed(settings.seed)
    model = GPT(GPTConfig(vocab_size=VOCAB_SIZE))
    console.print(f"pre-training a {model.num_params():,}-parameter model on single-digit worksheets")
    start = time.perf_counter()
    with _progress() as bar:
        task = bar.add_task("pretrain", total=settings.steps, loss=float("nan"))
        losses = run_pretrain(settings, model, lambda s: bar.update(task, completed=s.step, loss=s.loss))
    seconds = time.perf_counter() - start
    acc = worksheet_accuracy(model)
    checkpoint.save(model, {"kind": "pretrain", "settings": settings.to_dict(), "worksheet_accuracy": acc,
                            "train_seconds": round(seconds, 2), "losses": [round(x, 5) for x in losses]}, out)
    console.print(f"final loss {losses[-1]:.3f}, worksheet sums right: {acc:.0%} of 100, "
                  f"{seconds:.1f} s; wrote {out}")
    return 0


def train(args) -> int:
    """Fine-tune on a mix, evaluate, save."""
    from . import checkpoint

    mix = Mix.parse(args.mix)
    _check_writable(args.out)
    base = args.base or BASE
    checkpoint.read_metadata(base)  # fail fast on a bad base
    settings = FinetuneSettings(steps=args.steps, seed=args.seed, lr=args.lr, dropout=args.dropout,
                                batch_size=args.batch_size)
    with _progress() as bar:
        task = bar.add_task(mix.label(), total=settings.steps, loss=float("nan"))
        model, record = finetune_run(mix, settings, base,
                                     on_step=lambda s: bar.update(task, completed=s.step, loss=s.loss))
    checkpoint.save(model, record.checkpoint_meta(str(base)), args.out)
    console.print(_scores_table(record.scores, f"{mix.label()}, seed {settings.seed}: held-out"))
    console.print(f"fine-tune {record.train_seconds:.1f} s, evaluation {record.eval_seconds:.2f} s; wrote {args.out}")
    return 0


def evaluate(args) -> int:
    """Score a checkpoint on held-out sums."""
    from . import checkpoint
    from .evaluate import evaluate as run_eval
    from .files import write_json
    from .train import use_one_thread

    if args.json:
        _check_writable(args.json)  # fail before evaluating, not after
    use_one_thread()
    model, meta = checkpoint.load(args.checkpoint)
    seed = args.seed if args.seed is not None else int(meta.get("seed", 0))
    start = time.perf_counter()
    scores, scored = run_eval(model, seed, args.held_out)
    seconds = time.perf_counter() - start
    table = _scores_table({n: s.to_dict() for n, s in scores.items()},
                          f"{args.checkpoint.name}: held-out sums of seed {seed}")
    console.print(table)
    console.print(f"{sum(s.total for s in scores.values())} episodes in {seconds:.2f} s")
    if args.json:
        write_json(args.json, {"checkpoint": str(args.checkpoint), "seed": seed, "held_out": args.held_out,
                               "scores": {n: s.to_dict() for n, s in scores.items()},
                               "episodes": [_episode_json(s) for s in scored]})
        console.print(f"wrote {args.json}")
    return 0


def play(args) -> int:
    """Play one sum and print who wrote what."""
    from . import checkpoint
    from .evaluate import play as run_play
    from .probe import parse_sum
    from .train import use_one_thread

    problem = parse_sum(args.sum)
    use_one_thread()
    model, _ = checkpoint.load(args.checkpoint)
    (scored,) = run_play(model, [problem])
    console.print(_episode_text(scored.episode.transcript))
    for seg in scored.episode.transcript.segments:  # who wrote what, readable without colour too
        console.print(Text.assemble(f"  {ROLE_NAME[seg.role.value]:<11}", (_visible(seg.text),
                                                                            ROLE_STYLE[seg.role.value])))
    verdict = scored.verdict
    family = problem.family or "outside both families"
    mark = ("correct", "bold green") if verdict.solved else (f"wrong: {verdict.describe()}", "bold red")
    console.print(Text.assemble("verdict: ", mark, f"  (true sum {problem.answer}; {family})"))
    return 0


def plate(args) -> int:
    """The plate's three mixes on each seed, in parallel processes."""
    from .checkpoint import read_metadata
    from .files import write_json

    read_metadata(BASE)  # fail fast, before starting processes
    if args.json:
        _check_writable(args.json)
    settings = FinetuneSettings(steps=args.steps, lr=args.lr, dropout=args.dropout, batch_size=args.batch_size)
    jobs = [(name, seed) for seed in args.seeds for name in PRESETS]
    records: dict[tuple[str, int], RunRecord] = {}
    start = time.perf_counter()
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console)
    with bar, ProcessPoolExecutor(args.workers) as pool:
        task = bar.add_task(f"{len(jobs)} fine-tunes", total=len(jobs))
        futures = {pool.submit(_plate_job, name, replace(settings, seed=seed), args.held_out): (name, seed)
                   for name, seed in jobs}
        for fut in as_completed(futures):
            records[futures[fut]] = fut.result()
            bar.advance(task)
    wall = time.perf_counter() - start
    console.print(_plate_table(records, args.seeds, args.held_out))
    console.print(f"settings: {', '.join(f'{k} {v}' for k, v in settings.to_dict().items() if k != 'seed')}")
    secs = [r.train_seconds + r.eval_seconds for r in records.values()]
    console.print(f"{len(jobs)} runs on {args.workers} processes in {wall:.1f} s; one run (fine-tune + "
                  f"evaluation) took {min(secs):.1f}-{max(secs):.1f} s, mean {sum(secs) / len(secs):.1f} s")
    if args.json:
        write_json(args.json, {"settings": settings.to_dict(), "held_out": args.held_out,
                               "wall_seconds": round(wall, 2),
                               "runs": [{"preset": n, **records[(n, s)].to_dict()} for n, s in jobs]})
        console.print(f"wrote {args.json}")
    return 0


def _plate_job(name: str, settings: FinetuneSettings, held_out: int | None) -> RunRecord:
    _, record = finetune_run(PRESETS[name], settings, BASE, held_out)
    return record


def _pct(solved: int, total: int) -> str:
    return f"{100 * solved / total:.0f}%" if total else "-"


def _scores_table(scores: dict, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("family")
    t.add_column("solved", justify="right")
    t.add_column("rate", justify="right")
    t.add_column("95% interval", justify="right")
    t.add_column("failures")
    for name, s in scores.items():
        lo, hi = wilson(s["solved"], s["total"])
        fails = ", ".join(f"{k} {v}" for k, v in s["failures"].items()) or "-"
        t.add_row(name, f"{s['solved']}/{s['total']}", _pct(s["solved"], s["total"]),
                  f"{100 * lo:.0f}-{100 * hi:.0f}%", fails)
    return t


def _plate_table(records: dict, seeds: list[int], held_out: int | None) -> Table:
    n = "all" if held_out is None else held_out
    t = Table(title=f"held-out success, {n} sums per family; mean ± sd over seeds {','.join(map(str, seeds))}",
              title_justify="left")
    t.add_column("trained on")
    for fam in FAMILIES:
        t.add_column(fam, justify="right")
        t.add_column("per seed", justify="right", style="dim")
    t.add_column("plate", justify="right", style="dim")
    for name in PRESETS:
        row = [PRESET_LABELS[name]]
        for fam in FAMILIES:
            rates = [100 * records[(name, s)].scores[fam]["solved"] / records[(name, s)].scores[fam]["total"]
                     for s in seeds]
            m, sd = mean_sd(rates)
            row += [f"{m:.0f}% ± {sd:.0f}", " ".join(f"{r:.0f}" for r in rates)]
        row.append(" / ".join(f"{v}%" for v in PLATE[name]))
        t.add_row(*row)
    return t


def _visible(text: str) -> str:
    return text.replace("\n", "⏎")  # a newline the model writes is shown as ⏎, so the episode stays on one line


def _episode_text(transcript) -> Text:
    return Text.assemble(*((_visible(seg.text), ROLE_STYLE[seg.role.value]) for seg in transcript.segments))


def _episode_json(scored) -> dict:
    return {"family": scored.problem.family, "prompt": scored.problem.prompt, "answer": scored.problem.answer,
            "segments": [[s.role.value, s.text] for s in scored.episode.transcript.segments],
            "solved": scored.verdict.solved,
            "failure": scored.verdict.failure.value if scored.verdict.failure else None}
