"""`breadth study FILE`: run a study's plan (core.results.study), written before its runs, and report it.

Every step is checked before any runs (its flags as `breadth curve` or `breadth transfer` read them), then run in
order into one store, resuming like the commands themselves; each run a step stored is recorded under the plan's
hash. The report lists every step, its pool and design and its reading, flat or not, how many of its runs were
stored for this plan and how many only for another version of it (an edited plan), and what the plan says was
chosen after looking at results. `--status` trains nothing: it counts each step's runs (and their training steps)
already in the store, for a study that runs over several sessions or on a cluster.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from breadth.core.cli.envs import pool_words
from breadth.core.results.grid import GridError
from breadth.core.results.study import Step, Study, StudyError
from breadth.core.storage.files import UserFileError, same_file
from breadth.core.storage.store import Store
from breadth.core.sweeps.sweep import unfinished
from breadth.core.world.environments.mix import MixError
from breadth.core.world.environments.pools import DEFAULT_POOL
from breadth.core.world.environments.registry import EnvError
from breadth.core.world.runs.settings import SettingsError
from breadth.core.world.text.shown import shown

console = Console(highlight=False, markup=False, emoji=False)


def study(args) -> int:
    """Check every step, run them in order, then print the study's report."""
    plan = Study.read(args.file)
    steps = [(step, checked_args(step, args)) for step in plan.steps]  # every step checked before any runs
    console.print(
        f"study {shown(args.file)} (plan {plan.plan_hash}): {len(steps)} step{'s' * (len(steps) != 1)}; "
        f"question: {shown(plan.question)}"
    )
    if args.status:
        return status(steps, args.store)
    done: list[tuple[Step, list[str], str, int]] = []
    failed = 0
    for number, (step, step_args) in enumerate(steps, 1):
        console.rule(f"step {number}: {shown(step.name)} (breadth {step.command})", style="none")
        heard: list[tuple[list[str], str]] = []  # what the step's command says once its runs are stored
        code = _handler(step.command)(step_args, on_done=lambda keys, reading, ear=heard: ear.append((keys, reading)))
        keys, reading = heard[0] if heard else ([], "not run")
        with Store(args.store) as store:
            store.add_study_runs(plan.plan_hash, keys)
        done.append((step, keys, reading, code))
        failed += code != 0
    with Store(args.store, read_only=True) as store:
        recorded = store.study_runs()
    report(plan, done, recorded)
    return 1 if failed else 0


def status(steps: list[tuple[Step, argparse.Namespace]], store_path) -> int:
    """Each step's runs already in the store and its training steps, then the study's in all (a run two steps share
    counted once); nothing trained. For a study that runs over sessions or on a cluster: how far it has come."""
    with Store(store_path, read_only=True) as store:
        stored, where = store.keys(), store.path
    console.print(f"status only, nothing trained; store {shown(where)}")
    every: dict[str, int] = {}  # each run of the study, once: its training steps
    for number, (step, step_args) in enumerate(steps, 1):
        jobs = step_runs(step.command, step_args)
        have = [job for job in jobs if job.key in stored]
        shared = sum(job.key in every for job in jobs)
        console.print(
            f"step {number}: {shown(step.name)}: {len(have)} of {len(jobs)} runs stored, "
            f"{_steps(have):,} of {_steps(jobs):,} training steps"
            + (f" ({shared} of its runs an earlier step's)" if shared else "")
        )
        every.update((job.key, job.settings.steps) for job in jobs)
    done = {key: steps for key, steps in every.items() if key in stored}
    states = unfinished(where)
    partway = sum((states / f"{key}.safetensors").is_file() for key in every if key not in stored)
    console.print(
        f"in all: {len(done)} of {len(every)} runs stored, {sum(done.values()):,} of {sum(every.values()):,} "
        f"training steps ({100 * sum(done.values()) / max(1, sum(every.values())):.0f}%); "
        f"{len(every) - len(done)} runs to train"
        + (f", {partway} of them partway (their states in {shown(states)})" if partway else "")
    )
    return 0


def step_runs(command: str, step_args: argparse.Namespace) -> list:
    """The runs a step trains, each once, keyed as its command stores them (lockstep or alone, as it would run)."""
    if command == "curve":
        from breadth.core.cli.curve import curve_runs

        plan, _, base_hash = curve_runs(step_args)
        return [job for job, _, _ in plan.jobs(base_hash)]
    from breadth.core.cli.transfer import transfer_runs

    (*_, made), _, base_hash, _ = transfer_runs(step_args)
    jobs = {job.key: job for c in made if c.plan is not None for job, _, _ in c.plan.jobs(base_hash)}
    return list(jobs.values())


def _steps(jobs: list) -> int:
    """The training steps of these runs."""
    return sum(job.settings.steps for job in jobs)


def report(plan: Study, done: list[tuple[Step, list[str], str, int]], recorded: dict[str, set[str]]) -> None:
    """Every step with its pool, design and reading; runs stored for this plan or only for another version."""
    console.rule(f"the study's report (plan {plan.plan_hash})", style="none")
    console.print(f"question: {shown(plan.question)}")
    for number, (step, keys, reading, code) in enumerate(done, 1):
        ours = sum(plan.plan_hash in recorded.get(key, ()) for key in keys)
        other = sum(bool(recorded.get(key, set()) - {plan.plan_hash}) for key in keys)
        console.print(f"{number}. {shown(step.name)}: breadth {step.command} {shown(' '.join(step.args))}")
        console.print(f"   {_what(step)}; {len(keys)} runs stored, {ours} for this plan", end="")
        console.print(f", {other} also for another version of it" if other else "", end="")
        console.print("; some runs failed (see above)" if code else "")
        console.print(f"   reading: {reading}")
    if plan.chosen_after:
        console.print("chosen after looking at results (so not part of the plan made before the runs):")
        for choice in plan.chosen_after:
            console.print(f"  - {shown(choice)}")
    else:
        console.print("chosen after looking at results: nothing, the plan says")


def _what(step: Step) -> str:
    """A step's pool and design, in words, read off its flags."""
    pools = _values(step.args, "--pool")
    pool = [pool_words(pools[-1] if pools else DEFAULT_POOL, _values(step.args, "--where"))]
    design = _values(step.args, "--hold")
    vary = _values(step.args, "--vary")
    held = _values(step.args, "--held")
    out = f"pool {shown(' '.join(pool))}"
    if design:
        out += f", held out by design: {shown(' | '.join(design))}"
    elif step.command == "curve":
        out += f", {shown(held[0]) if held else 4} held out per split, drawn"
    if vary:
        out += f", training varied along: {shown(' | '.join(vary))}"
    return out


def _values(args: tuple[str, ...], flag: str) -> list[str]:
    """Every value given to `flag` in `args` (`--flag VALUE` or `--flag=VALUE`)."""
    out = []
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            out.append(args[i + 1])
        elif arg.startswith(f"{flag}="):
            out.append(arg.split("=", 1)[1])
    return out


def checked_args(step: Step, args) -> argparse.Namespace:
    """A step's flags as its command reads them, with the study's store, workers and cluster; one line (UsageError,
    UserFileError) for a flag the command refuses or an output over the study's own file."""
    from breadth.core.cli.parser import UsageError, build_parser, parse_argv
    from breadth.core.cli.path_flags import check_paths

    runner = ["--workers", str(args.workers)]
    runner += ["--store", str(args.store)] if args.store else []
    runner += ["--cluster", args.cluster] if args.cluster else []
    parser = build_parser()
    try:
        step_args = parse_argv(parser, [step.command, *step.args, *runner])
    except UsageError as e:
        raise UsageError(f"{shown(args.file)}: {step.where}: {e}") from None
    check_paths(parser, step_args)
    try:
        _planner(step.command)(step_args)  # the plan its command would run: refused here, before any step runs
    except (GridError, MixError, EnvError, SettingsError) as e:
        raise StudyError(f"{shown(args.file)}: {step.where}: {e}") from None
    for output in (getattr(step_args, "json", None), getattr(step_args, "figure", None)):
        written = (output, Path(f"{output}.png"), Path(f"{output}.svg")) if output is not None else ()
        if any(same_file(args.file, path) for path in written):
            raise UserFileError(0, f"{shown(output)}: that is the study's plan; write the result somewhere else")
    return step_args


def _planner(command: str):
    """The function that makes a step's plan from its flags, running nothing."""
    if command == "curve":
        from breadth.core.cli.curve import curve_plan

        return curve_plan
    from breadth.core.cli.transfer import transfer_plan

    return transfer_plan


def _handler(command: str):
    """The function that runs a step's command."""
    if command == "curve":
        from breadth.core.cli.curve import curve

        return curve
    from breadth.core.cli.transfer import transfer

    return transfer
