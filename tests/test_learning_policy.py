"""The greedy policy: the model's argmax next character, never padding, each row decoded as if alone."""

from __future__ import annotations

import torch

from breadth.core.learning.model import GPTConfig
from breadth.core.learning.policy import GreedyPolicy
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.episodes.episode import MAX_LENGTH
from breadth.core.world.episodes.rollout import complete, rollout
from breadth.core.world.text.vocab import BOS, CHARS, PAD

TWO = Problem((23, 45), "two_digit")
THREE = Problem((3, 4, 5), "three_digit")


class PadLovingModel:
    """Stands in for the model: always scores padding highest, then `7`, and counts the positions it is fed."""

    def __init__(self):
        self.config = GPTConfig(vocab_size=len(CHARS), block_size=MAX_LENGTH, n_layer=1, n_head=1, n_embd=4)
        self.fed = 0

    def eval(self):
        return self

    def __call__(self, ids, cache=None):
        self.fed += ids.shape[1]
        logits = torch.zeros(ids.shape[0], ids.shape[1], len(CHARS))  # (B, T, vocab)
        logits[..., 0] = 10.0
        logits[..., CHARS.index("7")] = 5.0
        return logits, None


def test_greedy_policy_never_chooses_padding(one_thread):
    """The greedy policy takes the best character other than padding, one position per step."""
    model = PadLovingModel()
    policy = GreedyPolicy(model, 2)
    assert policy.step([BOS, BOS]) == ["7", "7"]
    assert policy.step(["1", PAD]) == ["7", "7"]
    assert model.fed == 2


def test_greedy_batch_matches_rows_played_alone(base_model):
    """The real model decodes each row of a mixed-length batch exactly as it would alone (padding leaks nowhere)."""
    prompts = [TWO.prompt, THREE.prompt, "1+2=", "99+99+9="]
    batch = rollout(GreedyPolicy(base_model, len(prompts)), prompts)
    for p, ep in zip(prompts, batch, strict=True):
        (alone,) = rollout(GreedyPolicy(base_model, 1), [p])
        assert ep.transcript == alone.transcript and ep.end is alone.end
    assert all(ep.done for ep in batch)


def test_complete_reads_each_row_up_to_its_stop(base_model):
    """The base completes every worksheet prompt it is fed with the sum and a newline (its pre-training)."""
    prompts = [f"{BOS}{a}+{b}=" for a, b in [(3, 4), (9, 9), (0, 0)]]
    assert complete(GreedyPolicy(base_model, 3), prompts, stop=BOS, max_new=3) == ["7", "18", "0"]


def test_complete_gives_none_when_the_stop_never_comes(one_thread):
    """A row whose policy never writes the stop character within max_new gives None, not a partial answer."""
    assert complete(GreedyPolicy(PadLovingModel(), 1), [BOS + "1+1="], stop=BOS, max_new=3) == [None]


def test_sampling_repeats_with_its_seed_and_never_chooses_padding(base_model):
    """A sampling policy with the calculator in the loop gives the same episodes for the same seed, other
    episodes for another seed, and never samples padding."""
    from breadth.core.learning.policy import sampling
    from breadth.core.world.episodes.scoring import play

    problems = [TWO, THREE] * 8
    first = [s.episode.transcript.text for s in play(sampling(base_model, 1.0, seed=3), problems, batch=5)]
    again = [s.episode.transcript.text for s in play(sampling(base_model, 1.0, seed=3), problems, batch=5)]
    other = [s.episode.transcript.text for s in play(sampling(base_model, 1.0, seed=4), problems, batch=5)]
    assert first == again and first != other
    assert all(PAD not in text for text in first)
    model = PadLovingModel()
    assert sampling(model, 1.0)(2).step([BOS, BOS]) != [PAD, PAD]


def test_sampling_at_a_low_temperature_is_greedy(base_model):
    """At a temperature near zero, sampling chooses what the greedy policy chooses."""
    from breadth.core.learning.policy import greedy, sampling
    from breadth.core.world.episodes.scoring import play

    problems = [TWO, THREE, Problem((12, 7), "")]
    cold = [s.episode.transcript.text for s in play(sampling(base_model, 1e-4, seed=0), problems)]
    assert cold == [s.episode.transcript.text for s in play(greedy(base_model), problems)]
