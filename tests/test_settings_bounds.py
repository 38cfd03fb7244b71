"""A setting's limits read as people write them, and every float setting is limited to where its arithmetic works:
each command refuses a value outside in one line, and training works at both ends of what is accepted."""

from __future__ import annotations

import functools
import math

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.world.runs.recipes import mix_recipes
from breadth.core.world.runs.settings import MAX_SEED, FinetuneSettings, PretrainSettings, SettingsError, swept


def test_whole_number_limits_are_printed_as_integers_with_separators():
    """A seed above 2**32 - 1 names the limit 4,294,967,295, not 4.29497e+09."""
    with pytest.raises(SettingsError) as refused:
        FinetuneSettings(seed=MAX_SEED + 1)
    assert str(refused.value) == f"seed must be from 0 to 4,294,967,295, not {MAX_SEED + 1}"


def test_float_limits_are_printed_as_before():
    """A learning rate of 0 names its float limits as %g: from 1e-08 to 1."""
    with pytest.raises(SettingsError, match=r"^lr must be from 1e-08 to 1, not 0\.0$"):
        FinetuneSettings(lr=0.0)


def _floats(settings_class) -> list:
    """The float settings a settings class declares."""
    return [s for s in settings_class.settings() if s.kind is float]


def _commands() -> list[tuple[list[str], object]]:
    """(argv, a float setting it takes as a flag) for every command that takes one, read from the declarations; one
    step each, so that a value accepted by mistake costs seconds."""
    out = [(["pretrain", "--steps", "1", "--out", "{tmp}/base.safetensors"], s) for s in _floats(PretrainSettings)]
    for r in mix_recipes():
        train = ["train", "--recipe", r.name, "--mix", "add_2x2=8", "--steps", "1", "--out", "{tmp}/m.safetensors"]
        sweep = ["sweep", "--recipe", r.name, "--mix", "add_2x2=8", "--steps", "1", "--held-out", "1", "--seeds", "0"]
        out += [
            (argv, s) for s in swept(r.settings) if s.kind is float for argv in (train, [*sweep, "--store", "{tmp}/s"])
        ]
        if r.name == "reward":
            rl = ["rl", "--mix", "add_2x2=8", "--steps", "1", "--held-out", "1", "--out", "{tmp}/r.safetensors"]
            out += [(rl, s) for s in _floats(r.settings)]
    quick = ["--steps", "1", "--held-out", "1", "--seeds", "0", "--store", "{tmp}/s.sqlite"]
    out += [(["plate", *quick], s) for s in swept(FinetuneSettings) if s.kind is float]
    out += [(["matrix", "--plate", *quick], s) for s in swept(FinetuneSettings) if s.kind is float]
    curve = ["curve", "--where", "operands=2", "--n", "1", "--splits", "1", "--seeds", "0", "--min-steps", "1"]
    out += [
        ([*curve, "--store", "{tmp}/s"], s) for s in swept(FinetuneSettings) if s.kind is float and s.name != "steps"
    ]
    return out


ABSURD = ("1e-38", "1e38")  # an absurd tiny and an absurd huge value


def _absurd(setting) -> list[str]:
    """The absurd values a setting must refuse: the huge one, and the tiny one unless the setting takes 0 (a dropout
    or a weight decay of 0 is the arithmetic's own limit, and 1e-38 computes as 0 does)."""
    takes_zero = setting.low <= 0 <= setting.high and not setting.open_low
    return [v for v in ABSURD if not (takes_zero and float(v) < 1)]


def test_every_float_setting_of_every_recipe_has_a_command_covered_here():
    """The cases below reach every float setting of the pre-training and mix recipes' settings classes."""
    covered = {(s.name, s.low, s.high) for _, s in _commands()}
    declared = {
        (s.name, s.low, s.high) for c in (PretrainSettings, *(r.settings for r in mix_recipes())) for s in _floats(c)
    }
    assert declared and declared <= covered


@pytest.mark.parametrize(
    "argv, setting, value",
    [
        pytest.param(argv, s, v, id="-".join([*argv[: 3 if argv[1] == "--recipe" else 1], s.flag, v]))
        for argv, s in _commands()
        for v in _absurd(s)
    ],
)
def test_an_absurd_float_is_one_line_and_exit_2_on_every_command(argv, setting, value, tmp_path, capsys):
    """`--temperature 1e-38` (and every float setting's value outside its limits) is one line, exit 2, no file."""
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main([*argv, f"--{setting.flag}", value]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert (
        err.strip() == f"error: {setting.words} must be from {setting.low:g} to {setting.high:g}, not {float(value)!r}"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_form_the_engine_and_the_store_refuse_what_the_command_line_refuses():
    """`from_text` (the app's form) and `from_dict` (the engine's Train command, a stored run's settings) refuse each
    absurd value with the command line's very line."""
    for c in (PretrainSettings, *(r.settings for r in mix_recipes())):
        for s in _floats(c):
            for value in _absurd(s):
                said = f"{s.words} must be from {s.low:g} to {s.high:g}, not {float(value)!r}"
                with pytest.raises(SettingsError) as typed:
                    c.from_text(**{s.name: value})
                with pytest.raises(SettingsError) as stored:
                    c.from_dict({s.name: float(value)})
                assert str(typed.value) == str(stored.value) == said


def test_no_float_setting_is_limited_only_by_above_0():
    """Every float setting's lowest value is one it accepts (a number its arithmetic works at), never "above 0"."""
    for c in (PretrainSettings, *(r.settings for r in mix_recipes())):
        assert all(not s.open_low for s in _floats(c)), c.__name__


QUICK = {"steps": 2, "batch_size": 4, "prompts": 2, "group": 2, "warmup": 0}  # two steps, small batches


def _pretrain(model, settings) -> list[float]:
    """Pre-train `model` in place with `settings`; the losses."""
    from breadth.core.learning.train import pretrain

    return pretrain(settings, model)


def _on_mix(name: str, model, settings) -> list[float]:
    """Train `model` in place by the mix recipe `name` on eight two-digit sums; the losses."""
    from breadth.core.learning.trainers import trainer
    from breadth.core.world.environments.mix import Mix

    return trainer(name)(model, Mix.parse("add_2x2=8"), settings, None)


TRAININGS = [(PretrainSettings, _pretrain)] + [(r.settings, functools.partial(_on_mix, r.name)) for r in mix_recipes()]


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings_class, train, setting, end",
    [(c, t, s, end) for c, t in TRAININGS for s in _floats(c) for end in ("low", "high")],
    ids=lambda x: x if isinstance(x, str) else getattr(x, "name", getattr(x, "__name__", "")),
)
def test_training_works_at_both_limits_of_every_float_setting(
    settings_class, train, setting, end, base_path, one_thread
):
    """Two steps from the shipped base at a float setting's lowest and highest accepted value give finite losses
    and weights (no traceback from the arithmetic)."""
    import torch

    from breadth.core.learning import checkpoint

    names = {s.name for s in settings_class.settings()}
    value = getattr(setting, end)
    settings = settings_class(**{k: v for k, v in QUICK.items() if k in names}, **{setting.name: value})
    model, _ = checkpoint.load(base_path)
    losses = train(model, settings)
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert all(bool(torch.isfinite(p).all()) for p in model.parameters())


@pytest.mark.slow
def test_a_step_at_the_lowest_learning_rate_still_changes_the_weights(base_path, one_thread):
    """One AdamW step at every learning rate setting's lowest value changes most of the shipped base's weights (below
    it, a step is smaller than the spacing of float32 weights and changes next to none)."""
    from breadth.core.learning import checkpoint
    from breadth.core.learning.train import adamw, cross_entropy, demonstration_tensors
    from breadth.core.world.environments.environment import REGISTERED

    lows = {
        s.low for c in (PretrainSettings, *(r.settings for r in mix_recipes())) for s in _floats(c) if s.name == "lr"
    }
    batch = demonstration_tensors(REGISTERED["add_2x2"].demonstrations(0, 8))
    (floor,) = lows  # one lowest value, shared by every recipe
    changed = {}
    for lr in (floor, floor / 100):
        model, _ = checkpoint.load(base_path)
        before = [p.detach().clone() for p in model.parameters()]
        opt = adamw(model, lr, 0.0)
        cross_entropy(model, batch).backward()
        opt.step()
        moved = sum(int((p != b).sum()) for p, b in zip(model.parameters(), before, strict=True))
        changed[lr] = moved / sum(b.numel() for b in before)
    assert changed[floor] > 0.9 and changed[floor / 100] < 0.2, changed
