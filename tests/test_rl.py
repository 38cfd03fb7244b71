"""Learning from reward: advantages within a group, loss only on the model's own characters, exact repeats,
no NaN from masked positions, metrics kept in the record, the recipe through the store, the engine and the CLI."""

from __future__ import annotations

import queue
from pathlib import Path

import pytest
import torch

from breadth.core.cli.main import main
from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.learning import checkpoint, reward
from breadth.core.learning.policy import GreedyPolicy
from breadth.core.storage.header import read_header
from breadth.core.storage.presets import checkpoint_path
from breadth.core.storage.store import Store
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix
from breadth.core.world.episodes.episode import Episode
from breadth.core.world.episodes.rewards import Judged, advantages, judged, metrics
from breadth.core.world.episodes.rollout import rollout, run_episodes
from breadth.core.world.episodes.scores import MetadataError
from breadth.core.world.runs.records import Diverged, RunMeta, StepStats
from breadth.core.world.runs.settings import RewardSettings, SettingsError
from breadth.core.world.text.transcript import Role
from breadth.core.world.text.vocab import CHARS

THREE = Problem((3, 4, 5), "add_3x1")
LEADING_ZERO = Problem((0, 7, 6), "add_3x1")  # `B07+06|` adds up by a coincidence of leading zeros


def played(problem: Problem, actions: str) -> Judged:
    """An episode of `problem` in which the model writes `actions` (the calculator answering its calls), judged."""
    episode = Episode(problem.prompt)
    chars = iter(actions)
    while not episode.done:
        if episode.next_forced() is None:
            episode.act(next(chars))
    return judged(problem, episode)


RIGHT = "B3+4|B7+5|12|"  # the procedure
WRONG = "B3+4|7|"  # one call, the two-digit habit
NO_CALL = "12|"  # right, without the tool


def test_advantages_are_each_reward_minus_its_groups_mean():
    """Within a group, a correct episode's advantage is 1 minus the group's share correct; all-equal groups give 0s."""
    mixed = [played(THREE, a) for a in (RIGHT, WRONG, WRONG, WRONG)]
    assert advantages(mixed) == [0.75, -0.25, -0.25, -0.25]
    assert advantages([played(THREE, WRONG)] * 3) == [0.0, 0.0, 0.0]
    assert advantages([played(THREE, RIGHT)] * 2) == [0.0, 0.0]


def test_metrics_tell_a_right_answer_reached_the_wrong_way_from_the_procedure():
    """Reward counts every correct answer; `expected` only those made with the procedure's calls (the leading-zero
    trick and an answer without a call are right but not expected); pass, calls and the model's characters."""
    trick = played(LEADING_ZERO, "B07+06|13|")
    groups = [[played(THREE, RIGHT), played(THREE, WRONG)], [trick, played(LEADING_ZERO, NO_CALL.replace("12", "13"))]]
    assert trick.verdict.solved and not trick.expected_calls
    found = metrics(groups)
    assert found == {
        "reward": 0.75,
        "pass": 1.0,
        "expected": 0.25,
        "no_call": 0.25,
        "calls": (2 + 1 + 1 + 0) / 4,
        "chars": (len(RIGHT) + len(WRONG) + len("B07+06|13|") + len("13|")) / 4,
    }
    two = [[played(Problem((23, 45), "add_2x2"), "B23+45|68|")], [played(THREE, WRONG)]]
    assert metrics(two)["reward:add_2x2"] == 1.0 and metrics(two)["reward:add_3x1"] == 0.0


class Logits(torch.nn.Module):
    """Stands in for the model in the teacher-forced pass: returns fresh leaf logits, kept for their gradient."""

    def __init__(self, fill: float = 0.0):
        super().__init__()
        self.fill, self.seen = fill, []

    def forward(self, ids):
        logits = torch.randn(*ids.shape, len(CHARS), generator=torch.Generator().manual_seed(0))
        logits[..., 0] = self.fill  # padding's logit: -inf must not reach the loss either
        logits.requires_grad_(True)
        self.seen.append((ids, logits))
        return logits, None


def test_no_loss_reaches_the_prompt_the_calculator_or_padding():
    """The gradient reaches exactly the positions that predict a character the model wrote, read from the typed
    segments; the prompt's and the calculator's characters and the padding get none."""
    group = [played(THREE, RIGHT), played(THREE, WRONG), played(THREE, "B3+4|B7+5|99|")]
    batch = reward.batch_of([group])
    model = Logits()
    loss, _ = reward.policy_loss(model, batch)
    loss.backward()
    ((ids, logits),) = model.seen
    assert ids.shape[0] == 3  # every episode carries an advantage here
    for row, j in enumerate(group):
        roles = j.episode.transcript.roles()  # who wrote each character after the start token
        touched = logits.grad[row].abs().sum(-1) != 0  # (T,) positions whose prediction the loss reaches
        expected = [role is Role.ACTION for role in roles] + [False] * (ids.shape[1] - len(roles))
        assert touched.tolist() == expected
        assert Role.PROMPT in roles and Role.ENVIRONMENT in roles  # both kinds were there to be masked


def test_a_step_whose_rewards_are_all_equal_logs_zero_and_moves_nothing_but_momentum():
    """All-wrong or all-right groups: the loss is exactly 0 (not NaN, not -0), even with padding's logit at -inf,
    and the one episode put through the pass gets a zero gradient."""
    for actions in (WRONG, RIGHT):
        batch = reward.batch_of([[played(THREE, actions)] * 4, [played(THREE, actions)] * 4])
        model = Logits(fill=float("-inf"))
        loss, found = reward.policy_loss(model, batch)
        loss.backward()
        assert loss.item() == 0.0 and str(loss.item()) == "0.0"
        ((ids, logits),) = model.seen
        assert ids.shape[0] == 1 and torch.all(logits.grad == 0)
        assert found["reward"] == (1.0 if actions == RIGHT else 0.0)


def test_the_pass_skipping_episodes_without_advantage_gives_the_full_batchs_loss():
    """Leaving the zero-advantage episodes out of the teacher-forced pass changes neither the loss nor its value's
    normalisation (by every episode's model characters)."""
    torch.manual_seed(0)
    model, _ = checkpoint.load(checkpoint_path("base"))
    batch = reward.batch_of([[played(THREE, RIGHT), played(THREE, WRONG)], [played(THREE, WRONG)] * 2])
    loss, _ = reward.policy_loss(model, batch)
    logits, _ = model(batch.inputs)  # the full batch, by hand
    logits[..., 0] = float("-inf")
    logp = torch.log_softmax(logits, -1).gather(-1, batch.targets.clamp(min=0)[..., None])[..., 0]
    logp = torch.where(batch.targets != -1, logp, torch.zeros(()))
    full = -(logp * batch.advantages[:, None]).sum() / (batch.targets != -1).sum()
    assert loss.item() == pytest.approx(full.item(), rel=1e-5)


def test_fast_decoding_plays_exactly_as_one_position_at_a_time(one_thread):
    """Feeding the prompts in one step and dropping finished rows from the batch gives the same episodes as
    the plain decoder, including one that runs on to the context's end, and for prompts of several lengths."""
    model, _ = checkpoint.load(checkpoint_path("two_digit_70"))
    prompts = [q.prompt for q in REGISTERED["add_3x1"].held_out(0, 6) + REGISTERED["add_2x2"].held_out(0, 6)]
    prompts += ["0+0+0+0=", "99+99+99+99="]
    plain = [ep.transcript.text for ep in rollout(GreedyPolicy(model, len(prompts)), prompts)]
    fast = rollout(GreedyPolicy(model, len(prompts), drop_finished=True, feeds_many=True), prompts)
    assert [ep.transcript.text for ep in fast] == plain
    heard: list = []
    episodes = [Episode(q) for q in prompts[:3]]
    run_episodes(GreedyPolicy(model, 3, feeds_many=True), episodes, lambda i, role, c: heard.append((i, role, c)))
    assert "".join(c for i, _, c in heard if i == 0) == episodes[0].transcript.text  # every character heard


def test_sampling_for_reward_repeats_by_seed(one_thread):
    """The fast sampling policy is seeded like the plain one: the same seed, the same episodes."""
    model, _ = checkpoint.load(checkpoint_path("mix_35_35"))
    problems = REGISTERED["add_2x2"].demonstrations(0, 4)

    def texts(seed):
        groups = reward.sample(model, problems, 4, 1.0, torch.Generator().manual_seed(seed))
        return [j.episode.transcript.text for g in groups for j in g]

    assert texts(1) == texts(1) != texts(2)


def _run(seed: int = 0, start: str = "mix_35_35", mix: str = "add_2x2=20", **settings):
    """A tiny reward run: (losses, metrics per step, weights)."""
    model, _ = checkpoint.load(checkpoint_path(start))
    heard: list[StepStats] = []
    chosen = RewardSettings(**({"steps": 3, "prompts": 3, "group": 4, "seed": seed, "lr": 1e-3} | settings))
    losses = reward.from_reward(model, Mix.parse(mix), chosen, lambda s: heard.append(s) or True)
    return losses, [dict(s.metrics) for s in heard], {k: v.clone() for k, v in model.state_dict().items()}


def test_a_seeded_run_repeats_exactly_and_another_seed_does_not(one_thread):
    """Two runs with the same seed give the same losses, metrics and weights; another seed gives other ones."""
    losses, found, weights = _run(0)
    again, found_again, weights_again = _run(0)
    assert losses == again and found == found_again
    assert all(torch.equal(weights[k], weights_again[k]) for k in weights)
    assert any(x != 0 for x in losses)  # groups were mixed: the run learned something to repeat
    other, found_other, _ = _run(1)
    assert (other, found_other) != (losses, found)
    assert set(found[0]) >= {"reward", "pass", "expected", "no_call", "calls", "chars"}


def test_the_learning_rate_falls_linearly_to_zero(one_thread, monkeypatch):
    """Step s of n runs at lr * (1 - (s - 1) / n): the first at lr, the last at lr / n."""
    seen: list[float] = []
    real = torch.optim.AdamW.step

    def step(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", step)
    _run(steps=4, lr=1e-3)
    assert seen == pytest.approx([1e-3, 0.75e-3, 0.5e-3, 0.25e-3])


def test_weights_that_stop_being_finite_stop_the_run_with_its_step(one_thread, monkeypatch):
    """A step that leaves a weight infinite stops the next one with Diverged naming it (sampling would fail)."""
    real = torch.optim.AdamW.step

    def poisoned(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        with torch.no_grad():
            self.param_groups[0]["params"][0][1, 0] = float("inf")  # the loss was finite; the weights are not
        return out

    monkeypatch.setattr(torch.optim.AdamW, "step", poisoned)
    with pytest.raises(Diverged, match="^the weights stopped being finite numbers before step 2; try a lower"):
        _run()


def test_a_group_of_one_and_other_bad_settings_are_refused_in_one_line():
    """A group of 1 has no group mean to compare with; limits are the declared ones."""
    with pytest.raises(SettingsError, match="^group size must be at least 2: a lone episode"):
        RewardSettings(group=1)
    with pytest.raises(SettingsError, match="group size must be from 2 to 64"):
        RewardSettings(group=65)
    with pytest.raises(SettingsError, match="more than 4096 episodes"):
        RewardSettings(prompts=256, group=64)
    assert RewardSettings.from_text(group="2", temperature="0.5") == RewardSettings(group=2, temperature=0.5)


def test_a_records_metrics_and_before_round_trip_and_old_records_still_read():
    """Metrics per step and the measures before training survive to_dict/from_dict; a record without them (every
    record before reward) reads with none; malformed ones are one line."""
    run = RunMeta(
        "reward",
        RewardSettings(steps=2),
        "add_3x1=20",
        0,
        5,
        losses=(0.5, 0.25),
        metrics={"reward": (0.125, 0.25), "pass": (0.5, 1.0)},
        before={"pass": 0.0625},
    )
    assert RunMeta.from_dict(run.to_dict()) == run
    old = RunMeta("finetune", None, "add_2x2=7", 0, 5, losses=(1.0,))
    assert "metrics" not in old.to_dict() and "before" not in old.to_dict()
    assert RunMeta.from_dict(old.to_dict()).metrics == {}
    bad = run.to_dict() | {"metrics": {"reward": [0.1, 0.2, 0.3]}}  # more values than steps
    with pytest.raises(MetadataError, match="one per step"):
        RunMeta.from_dict(bad)
    with pytest.raises(MetadataError, match="before must map"):
        RunMeta.from_dict(run.to_dict() | {"before": {"pass": "high"}})
    assert StepStats(1, 2, 0.5, 0.1).metrics == {}  # every existing caller's steps carry no metrics


def test_the_reward_recipe_trains_through_the_engine_and_lands_in_the_store(one_thread, tmp_path):
    """Train(recipe="reward") streams its steps with their metrics, saves a checkpoint of kind reward with its
    settings, metrics and pass@G before training, and records the run in the results store with RewardSettings."""
    from breadth.core.learning.experiment import TorchModels

    events: list = []
    settings = {"steps": 2, "prompts": 2, "group": 2, "seed": 1}
    start = str(checkpoint_path("two_digit_70"))
    Session(events.append, TorchModels(), queue.Queue()).handle(
        p.Train(7, "add_3x1=4", settings, start, str(tmp_path), held_out=2, recipe="reward")
    )
    steps = [e for e in events if isinstance(e, p.Step)]
    assert [e.step for e in steps] == [1, 2] and all("reward" in e.metrics and "pass" in e.metrics for e in steps)
    assert p.decode(p.encode(steps[0])) == steps[0]  # the metrics cross the process boundary as JSON
    (trained,) = [e for e in events if isinstance(e, p.Trained)]
    meta = read_header(trained.path).run
    assert meta.recipe == "reward" and meta.settings == RewardSettings(**settings) and meta.base == start
    assert set(meta.metrics) >= {"reward", "pass", "expected", "no_call", "calls", "chars"}
    assert all(len(v) == 2 for v in meta.metrics.values()) and "pass" in meta.before
    with Store() as store:
        (run,) = store.runs()
    assert run.run.recipe == "reward" and run.run.settings == RewardSettings(**settings)
    assert run.run.metrics == meta.metrics and run.checkpoint == trained.path


def _one_line_error(capsys, argv) -> str:
    """Run `breadth` in-process; it must fail with exit 2 and exactly one stderr line."""
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _other_vocabulary(tmp_path: Path) -> Path:
    """A copy of the shipped base whose header names another vocabulary."""
    model, header = checkpoint.load(checkpoint_path("base"))
    path = checkpoint.save(model, header.run, tmp_path / "other.safetensors")
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    head = data[8 : 8 + n].decode()
    assert head.count("0123456789") == 1
    head = head.replace("0123456789", "9876543210")
    path.write_bytes(data[:8] + head.encode() + data[8 + n :])
    return path


def test_breadth_rl_refuses_bad_input_in_one_line(capsys, tmp_path):
    """Group size 1, a mix naming no environment, an empty mix, another vocabulary, an unknown checkpoint and a
    learning rate out of range: one line each, exit 2, nothing written."""
    out = tmp_path / "rl.safetensors"
    base = ["rl", "--mix", "add_3x1=10", "--out", out]
    assert "group size must be at least 2" in _one_line_error(capsys, [*base, "--group-size", "1"])
    assert "names no environment" in _one_line_error(capsys, ["rl", "--mix", "@operands:9=5", "--out", out])
    assert "empty mix" in _one_line_error(capsys, ["rl", "--mix", "", "--out", out])
    assert "vocabulary differs" in _one_line_error(capsys, [*base, "--from", _other_vocabulary(tmp_path)])
    assert "no shipped model of that name" in _one_line_error(capsys, [*base, "--from", "nope"])
    assert "lr must be from 1e-08 to 1" in _one_line_error(capsys, [*base, "--lr", "0"])
    assert not out.exists()


def test_breadth_rl_that_diverges_says_the_step_and_keeps_the_previous_model(capsys, tmp_path, monkeypatch):
    """A loss that stops being finite ends the run in one line naming the step and the value; no file is written
    and the starting checkpoint is untouched."""
    real = reward.policy_loss
    calls = []

    def diverging(model, batch):
        loss, found = real(model, batch)
        calls.append(1)
        return (loss * float("nan") if len(calls) == 2 else loss), found

    monkeypatch.setattr(reward, "policy_loss", diverging)
    start = tmp_path / "start.safetensors"
    start.write_bytes(checkpoint_path("two_digit_70").read_bytes())
    out = tmp_path / "rl.safetensors"
    argv = ["rl", "--mix", "add_3x1=4", "--from", start, "--steps", "3", "--prompts", "2", "--group-size", "2"]
    err = _one_line_error(capsys, [*argv, "--out", out])
    assert "the loss became nan at step 2" in err and "nothing was written" in err
    assert not out.exists() and start.read_bytes() == checkpoint_path("two_digit_70").read_bytes()


def test_breadth_rl_says_pass_at_g_first_prints_metrics_and_records_the_run(capsys, tmp_path):
    """From the two-digit model on three-digit sums: pass@G before training (zero, said plainly), a line of
    metrics per step asked for, held-out scores, the checkpoint of kind reward and the store's record."""
    out = tmp_path / "rl.safetensors"
    argv = ["rl", "--mix", "add_3x1=8", "--from", "two_digit_70", "--steps", "2", "--prompts", "4"]
    assert main([*argv, "--group-size", "2", "--every", "1", "--held-out", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.replace("\n", " ")
    assert "before training: pass@2 at temperature 1 on the 8 training prompts 0.0%" in printed
    assert "reward has nothing to reinforce" in printed
    assert " step    loss reward pass@2 expected no call calls chars" in printed
    assert "after training: pass@2" in printed and "held-out" in printed
    assert read_header(out).run.recipe == "reward"
    with Store() as store:
        (run,) = store.runs()
    assert run.run.settings == RewardSettings(steps=2, prompts=4, group=2) and run.source == "rl"


def test_breadth_train_takes_the_reward_recipe_through_the_seam(capsys, tmp_path):
    """`breadth train --recipe reward` with reward's own flags trains by reward; a reward flag on the plate's
    recipe is one line."""
    out = tmp_path / "t.safetensors"
    argv = ["train", "--recipe", "reward", "--mix", "add_3x1=4", "--base", "two_digit_70", "--steps", "2"]
    assert main([*argv, "--prompts", "2", "--group-size", "2", "--out", str(out)]) == 0
    run = read_header(out).run
    assert run.recipe == "reward" and run.settings == RewardSettings(steps=2, prompts=2, group=2)
    assert "pass" in run.before and len(run.metrics["reward"]) == 2
    capsys.readouterr()
    plate = ["train", "--mix", "add_2x2=4", "--group-size", "2", "--out", tmp_path / "x"]
    assert "--group-size is not a setting of the finetune recipe" in _one_line_error(capsys, plate)
