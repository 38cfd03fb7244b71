"""What each `breadth` subcommand does, given parsed arguments, with rich progress bars."""

from __future__ import annotations

import time
from dataclasses import replace

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from breadth.core.cli.parser import recipe_settings
from breadth.core.cli.tables import episode_json, episode_lines, plate_table, scores_table
from breadth.core.results.grid import Grid, GridError, parse_seeds
from breadth.core.storage.files import write_json
from breadth.core.storage.header import read_header, weights_hash
from breadth.core.storage.paths import BASE, default_base_out
from breadth.core.storage.presets import PRESETS
from breadth.core.storage.snapshot_file import keep_every
from breadth.core.storage.store import Store, StoredRun, StoreError, run_key
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.pools import DEFAULT_POOL
from breadth.core.world.environments.probe import parse_sum
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings, ModelShape, PretrainSettings, held_out_from_text
from breadth.core.world.text.shown import episode_text, shown

console = Console(highlight=False, markup=False, emoji=False)  # what it prints is text: paths, stored names


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

    from breadth.core.learning import checkpoint
    from breadth.core.learning.evaluate import worksheet_accuracy
    from breadth.core.learning.model import GPT, GPTConfig
    from breadth.core.learning.train import pretrain as run_pretrain
    from breadth.core.learning.train import use_one_thread

    settings, shape = (
        kind.from_text(**{s.name: getattr(args, s.name) for s in kind.settings() if getattr(args, s.name) is not None})
        for kind in (PretrainSettings, ModelShape)
    )
    out = args.out or default_base_out()  # checked by check_paths, as every output is
    use_one_thread()
    torch.manual_seed(settings.seed)
    model = GPT(GPTConfig(**shape.to_dict()))
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
    console.print(
        f"final loss {losses[-1]:.3f}, worksheet sums right: {acc:.0%} of 100, {seconds:.1f} s; wrote {shown(out)}"
    )
    return 0


def train(args) -> int:
    """Fine-tune on a mix, evaluate, save."""
    from breadth.core.learning import checkpoint, snapshots
    from breadth.core.learning.experiment import train_run

    mix = Mix.parse(args.mix)
    settings = recipe_settings(args, args.seed)
    base = args.base or BASE
    read_header(base)  # fail fast on a bad base
    Store(args.store).close()  # a store that cannot be used: refused before training, not after
    kept: dict = {}  # step -> snapshot, for the app's procedure view (F9)
    with _progress() as bar:
        task = bar.add_task(mix.label(), total=settings.steps, loss=float("nan"))
        model, record = train_run(
            mix,
            settings,
            base,
            on_step=lambda s: bar.update(task, completed=s.step, loss=s.loss),
            on_snapshot=kept.__setitem__,
            snapshot_every=keep_every(settings.steps),
        )
    checkpoint.save(model, record, args.out)
    start = time.perf_counter()
    scores = {step: snapshots.score(snapshot, settings.seed) for step, snapshot in kept.items()}
    sidecar = snapshots.save(args.out, record, kept, scores)
    console.print(scores_table(record.scores, f"{mix.label()}, seed {settings.seed}: held-out"))
    console.print(
        f"fine-tune {record.train_seconds:.1f} s, evaluation {record.eval_seconds:.2f} s; wrote {shown(args.out)}"
    )
    if sidecar is not None:
        console.print(
            f"its snapshots at steps {', '.join(map(str, sorted(scores)))}, scored in "
            f"{time.perf_counter() - start:.1f} s: {shown(sidecar)}"
        )
    return record_run(args.store, record, base, "train", args.out)


def record_run(store_path, record: RunMeta, base, source: str, checkpoint_path) -> int:
    """Keep a finished run in the store (a run already there is left as it is): 0, or 1 after one line on stderr
    saying why it was not kept (the checkpoint is written: the line comes after how the run went)."""
    from breadth.core.learning.experiment import versions

    base_hash = weights_hash(base)
    key = run_key(record.mix, record.settings, record.held_out, base_hash)
    try:
        with Store(store_path) as store:
            store.add(StoredRun(key, record, base_hash, source, str(checkpoint_path), versions()))
    except StoreError as e:
        Console(stderr=True, highlight=False, emoji=False).print(
            f"not recorded in the results store: {shown(e)}", markup=False, soft_wrap=True
        )
        return 1
    return 0


def evaluate(args) -> int:
    """Score a checkpoint on held-out sums (of many environments, by dimension, with --envs, --where, --draw or
    --pool)."""
    if args.envs is not None or args.where or args.draw is not None or args.pool != DEFAULT_POOL:
        from breadth.core.cli.env_scores import evaluate_environments

        return evaluate_environments(args)
    from breadth.core.learning import checkpoint
    from breadth.core.learning.evaluate import evaluate as run_eval
    from breadth.core.learning.train import use_one_thread

    held_out = held_out_from_text(args.held_out)
    seed = None if args.seed is None else FinetuneSettings.from_text(seed=args.seed).seed
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
        console.print(f"wrote {shown(args.json)}")
    if args.figure:
        from breadth.core.results.figures import model_figure

        for path in model_figure(replace(header.run, scores=scores, held_out=held_out), args.figure):
            console.print(f"wrote {shown(path)}")
    return 0


def play(args) -> int:
    """Play one sum and print who wrote what; a bad sum is refused before torch loads (seconds under load)."""
    problem = parse_sum(args.sum)
    from breadth.core.learning import checkpoint
    from breadth.core.learning.policy import greedy
    from breadth.core.learning.train import use_one_thread
    from breadth.core.world.episodes.scoring import play as run_play

    use_one_thread()
    model, _ = checkpoint.load(args.checkpoint)
    (scored,) = run_play(greedy(model), [problem], max_length=model.config.block_size)
    console.print(episode_text(scored.episode.transcript))
    for line in episode_lines(scored.episode.transcript):
        console.print(line)
    verdict = scored.verdict
    env = problem.environment or "outside every environment"
    mark = ("correct", "bold green") if verdict.solved else (f"wrong: {verdict.describe()}", "bold red")
    console.print(Text.assemble("verdict: ", mark, f"  (true result {problem.answer}; {env})"))
    return 0


def plate(args) -> int:
    """The plate's three mixes on each seed, in parallel processes; runs already in the store are not repeated."""
    from breadth.core.cli.grids import run_with_progress

    read_header(BASE)  # fail fast, before starting processes
    held_out = held_out_from_text(args.held_out)
    seeds = parse_seeds(args.seeds)
    settings = recipe_settings(args)
    grid = Grid(tuple(p.mix for p in PRESETS.values()), settings, (), seeds, held_out)
    start = time.perf_counter()
    base_hash = weights_hash(BASE)
    with Store(args.store) as store:
        jobs = grid.jobs(base_hash)
        outcome = run_with_progress(jobs, store, BASE, base_hash, "plate", args.workers, None)
    if outcome.failed:
        job, why = outcome.failed[0]
        raise GridError(f"{len(outcome.failed)} runs failed, e.g. {job.cell.mix.spec()} seed {job.seed}: {why}")
    wall = time.perf_counter() - start
    preset_of_mix = {p.mix: p.name for p in PRESETS.values()}
    records = {(preset_of_mix[j.cell.mix], j.seed): outcome.stored[j.key].run for j in jobs}
    console.print(plate_table(records, list(seeds), held_out))
    console.print(f"settings: {', '.join(f'{k} {v}' for k, v in settings.to_dict().items() if k != 'seed')}")
    secs = [r.train_seconds + r.eval_seconds for r in records.values()]
    console.print(
        f"{len(jobs)} runs ({outcome.ran} run now, {len(jobs) - outcome.ran} found in the store) on {args.workers} "
        f"processes in {wall:.1f} s; one run (fine-tune + evaluation) took {min(secs):.1f}-{max(secs):.1f} s, "
        f"mean {sum(secs) / len(secs):.1f} s"
    )
    if args.json:
        runs = [
            {"preset": preset_of_mix[j.cell.mix], **_run_json(records[(preset_of_mix[j.cell.mix], j.seed)])}
            for j in jobs
        ]
        write_json(
            args.json,
            {"settings": settings.to_dict(), "held_out": held_out, "wall_seconds": round(wall, 2), "runs": runs},
        )
        console.print(f"wrote {shown(args.json)}")
    return 0


def _run_json(run: RunMeta) -> dict:
    """A run as the plate's JSON keeps it: the record without its loss curve."""
    return {k: v for k, v in run.to_dict().items() if k != "losses"}
