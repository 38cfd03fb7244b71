"""Can a model read which call form an environment wants from its prompt? The measurement behind `FORMS`.

For each seed, the shipped base is fine-tuned (`core.learning.train.finetune`, the default recipe) on the plate's
two task kinds, two two-digit numbers and three single digits, 35 demonstrations of each in every form (other sums
for each form), with the steps scaled so that each demonstration is seen about as often as on the plate (70
demonstrations, 400 steps, batch 8): the *all forms* model. Then, per form, the base is fine-tuned on that form's
70 demonstrations alone (400 steps: for the plate's form this is the plate's mix 35+35). Every model plays the
same 100 held-out sums per kind in every form, greedily, the episode's prompt and calls in that form, judged by
the real verdict: the share solved, and the share whose calls are all in the asked form (at least one call, none
malformed: the model read the form, whatever its numbers).

How `FORMS` was chosen: a form passes a run if the all-forms model solves at least KEEP of each kind in it (mean
over seeds). First every candidate together (`--seeds 0-5`), then the forms that passed, together (`--forms ...
--seeds 0-2`): a form is kept if it passes both (the plate's form is kept whatever it scores).
`python -m bench.forms_trial [--forms infix,postfix,call,paren] [--seeds 0-5] [--held-out 100] [--json PATH]`.
A benchmark, not a unit test: about 80 s of one core per seed for four forms, on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass

from bench.outputs import refused, write
from breadth.core.learning import checkpoint
from breadth.core.learning.model import GPT
from breadth.core.learning.policy import GreedyPolicy
from breadth.core.learning.train import finetune, use_one_thread
from breadth.core.storage.paths import BASE
from breadth.core.world.arithmetic.calculator import DROPPED, FORMS, CallSyntax
from breadth.core.world.arithmetic.operations import ADD
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.episodes.episode import Episode
from breadth.core.world.episodes.rollout import run_episodes
from breadth.core.world.episodes.verdict import judge
from breadth.core.world.runs.settings import FinetuneSettings
from breadth.core.world.text.transcript import Role, Segment, Transcript

CANDIDATES = {**FORMS, **{f.name: f for f in DROPPED}}  # every form measured: kept ones, then dropped ones
KINDS = ("add_2x2", "add_3x1")  # the plate's two task kinds
DEMOS = 35  # demonstrations per kind per form, as in the plate's mix 35+35
PLATE_STEPS, PLATE_DEMOS = 400, 70  # the plate: each demonstration seen about 400 * 8 / 70 = 46 times
KEEP = 0.90  # a form is kept if the all-forms model solves at least this share of each kind in it
Scores = dict[str, dict[str, dict[str, float]]]  # form -> kind -> {"solved": share, "in form": share}


@dataclass(frozen=True)
class Posed:
    """A problem as a form poses and demonstrates it (what `finetune` reads: `.demonstration()`).

    `Problem.demonstration(form)` writes the form's calls but the plate's prompt; the prompt here is the form's.
    """

    problem: Problem
    form: CallSyntax

    def demonstration(self) -> Transcript:
        """The form's prompt, then the demonstrator's calls, the tool's results and the answer in that form."""
        written = self.problem.demonstration(self.form).segments[1:]  # after the plate's prompt
        prompt = self.form.prompt(self.problem.operands, self.problem.operation)
        return Transcript([Segment(Role.PROMPT, prompt), *written])


def demonstrations(seed: int, forms: list[CallSyntax]) -> dict[str, list[Posed]]:
    """Per form, DEMOS sums of each kind, other sums for each form (the plate's own first DEMOS for the first)."""
    out: dict[str, list[Posed]] = {f.name: [] for f in forms}
    for kind in KINDS:
        pool = REGISTERED[kind].demonstrations(seed, DEMOS * len(forms))
        for i, form in enumerate(forms):
            out[form.name] += [Posed(p, form) for p in pool[i * DEMOS : (i + 1) * DEMOS]]
    return out


def trained(seed: int, posed: list[Posed]) -> tuple[GPT, float]:
    """The base fine-tuned on `posed` with the default recipe, steps scaled to the plate's; and the seconds taken."""
    model, _ = checkpoint.load(BASE)
    steps = round(PLATE_STEPS * len(posed) / PLATE_DEMOS)
    start = time.perf_counter()
    finetune(model, posed, FinetuneSettings(steps=steps, seed=seed))  # type: ignore[arg-type]  # Posed reads as one
    return model, time.perf_counter() - start


def scores(model: GPT, seed: int, held_out: int, forms: list[CallSyntax]) -> tuple[Scores, dict]:
    """Per form and kind, the shares solved and in form, greedily with the episode in that form; and the failures."""
    out: Scores = {}
    failed: dict[str, dict[str, dict[str, int]]] = {}
    problems = [p for kind in KINDS for p in REGISTERED[kind].held_out(seed, held_out)]
    for form in forms:
        episodes = [
            Episode(form.prompt(p.operands, p.operation), syntax=form, max_length=model.config.block_size)
            for p in problems
        ]
        run_episodes(GreedyPolicy(model, len(episodes)), episodes)
        rows = [
            (p.environment, judge(ep, p), bool(ep.calls) and all(c.result != form.malformed for c in ep.calls))
            for ep, p in zip(episodes, problems, strict=True)
        ]
        out[form.name] = {
            kind: {
                "solved": sum(v.solved for k, v, _ in rows if k == kind) / held_out,
                "in form": sum(ok for k, _, ok in rows if k == kind) / held_out,
            }
            for kind in KINDS
        }
        failed[form.name] = {
            kind: dict(Counter(v.failure.value for k, v, _ in rows if k == kind and not v.solved).most_common())
            for kind in KINDS
        }
    return out, failed


def trial(seed: int, held_out: int, forms: list[CallSyntax], say) -> dict[str, Scores]:
    """One seed: the all-forms model and one model per form, each scored in every form."""
    posed = demonstrations(seed, forms)
    runs = {"all": [p for f in forms for p in posed[f.name]], **{f.name: posed[f.name] for f in forms}}
    out = {}
    for name, demos in runs.items():
        model, seconds = trained(seed, demos)
        out[name], failed = scores(model, seed, held_out, forms)
        solved = {f: {k: v["solved"] for k, v in kinds.items()} for f, kinds in out[name].items()}
        say(f"seed {seed} trained on {name} ({len(demos)} demonstrations, {seconds:.1f} s): solved {solved}")
        if name == "all":
            say(f"  its failures: {failed}")
    return out


def summary(results: dict[int, dict[str, Scores]], forms: list[CallSyntax]) -> dict:
    """Per form and kind, per seed: solved trained on all forms, on this form only, on another form only (mean over
    the others), and the share in form trained on all forms and on another form only."""
    table: dict = {}
    runs = list(results.values())
    for form in forms:
        others = [f.name for f in forms if f.name != form.name]
        table[form.name] = {}
        for kind in KINDS:
            mine = [{run: r[run][form.name][kind] for run in r} for r in runs]  # per seed: run -> its shares here
            table[form.name][kind] = {
                "solved, all forms": [m["all"]["solved"] for m in mine],
                "solved, this form only": [m[form.name]["solved"] for m in mine],
                "solved, another form only": [statistics.mean(m[o]["solved"] for o in others) for m in mine],
                "in form, all forms": [m["all"]["in form"] for m in mine],
                "in form, another form only": [statistics.mean(m[o]["in form"] for o in others) for m in mine],
            }
    return table


def cell(values: list[float]) -> str:
    """`97% (98 95 98)`: the mean over seeds, then each seed's."""
    return f"{statistics.mean(values):4.0%} ({' '.join(f'{x * 100:.0f}' for x in values)})" if values else "-"


def seeds_of(text: str) -> list[int]:
    """Seeds written `0-5` or `0,1,2` (or both: `0-2,7`)."""
    out: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            out += range(int(low), int(high or low) + 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds such as 0-5 or 0,1,2, not {text[:40]!r}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"no seeds in {text[:40]!r}")
    return list(dict.fromkeys(out))


def held_out_of(text: str) -> int:
    """A held-out size: 1 to 800 (three single digits hold 800 sums outside their demonstration pool)."""
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 800):
        raise argparse.ArgumentTypeError(f"a whole number from 1 to 800, not {text[:40]!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forms", default=",".join(CANDIDATES), help="two or more forms (default: all)")
    parser.add_argument("--seeds", type=seeds_of, default="0-2", help="seeds: 0-5 or 0,1,2 (default 0-2)")
    parser.add_argument("--held-out", type=held_out_of, default=100, help="held-out sums per kind and form, 1-800")
    parser.add_argument("--json", help="also write the measurements here")
    args = parser.parse_args(argv)
    if refused(parser.prog, args.json):  # before the work, not after it
        return 2
    names = args.forms.split(",")
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown or len(set(names)) < 2:
        parser.error(f"two or more forms of {', '.join(CANDIDATES)}, not {args.forms!r}")
    use_one_thread()
    seeds = args.seeds
    forms = [CANDIDATES[n] for n in dict.fromkeys(names)]
    print("forms: " + ", ".join(f"{f.name} {f.prompt((23, 45), ADD)}{f.write(f.body(23, ADD, 45))}" for f in forms))
    print(f"seeds {seeds}, {args.held_out} held-out sums per kind; load average {os.getloadavg()[0]:.2f}", flush=True)
    results = {seed: trial(seed, args.held_out, forms, lambda line: print(line, flush=True)) for seed in seeds}
    table = summary(results, forms)
    columns = list(next(iter(next(iter(table.values())).values())))
    print(f"\nmean over seeds (per seed); a form is kept at >= {KEEP:.0%} solved of each kind, trained on all forms")
    print(f"{'form':8} {'kind':12} " + " ".join(f"{c:>26}" for c in columns) + "  keep")
    kept = []
    for name, kinds in table.items():
        keep = all(statistics.mean(kinds[k]["solved, all forms"]) >= KEEP for k in KINDS)
        kept += [name] if keep else []
        for kind, cols in kinds.items():
            row = " ".join(f"{cell(v):>26}" for v in cols.values())
            print(f"{name:8} {kind:12} {row}  {'yes' if keep else 'no'}")
    print(f"kept: {', '.join(kept) or 'none'}")
    out = {"forms": [f.name for f in forms], "seeds": seeds, "held_out": args.held_out, "keep": KEEP}
    write(args.json, {**out, "table": table, "kept": kept, "runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
