"""Every breadth environment as a Gymnasium text environment: `gymnasium.make("breadth/two-digit-v1")`.

Importing this module registers the whole registry with Gymnasium under breadth's own ids (or let
`gymnasium.make("breadth.core.world.gym_envs:breadth/two-digit-v1")` import it). It is the only module that
imports gymnasium, an optional extra: `pip install -c constraints.txt '.[gym]'`.

The observation is the transcript so far (the sum as posed, then every segment written since); an action is
the model's next segment, a call such as `B23+45|` or an answer such as `68|`. The environment reads the action
up to the point where it must answer (a call closed: the calculator's result is appended) or the episode ends;
characters after that point are not read (`info["unread"]`). Episodes end on an answer, a malformed call, one
call too many or the context's length; every end terminates (the limits are part of the task, and the verdict
counts them as failures), so `truncated` is always False. The reward is 1 for a correct answer and 0 otherwise;
the final `info` carries the verdict (`correct` or the failure kind) and the true result.

`reset(seed=...)` draws a problem of one split of the environment's order for `split_seed` (breadth's `--seed`):
the test split by default, `options={"split": "validation"}` or `"demonstrations"`; `options={"index": i}` takes
the split's i-th problem instead of a drawn one.
"""

from __future__ import annotations

from typing import Any

try:
    import gymnasium as gym
    from gymnasium import spaces
except ModuleNotFoundError as e:  # an optional extra: say how to get it
    raise ModuleNotFoundError(
        "breadth's Gymnasium environments need gymnasium: pip install -c constraints.txt '.[gym]'", name=e.name
    ) from None

from breadth.core.world.environments import env_id, environment, environments
from breadth.core.world.episode import MAX_LENGTH, Episode
from breadth.core.world.families import Family, Problem
from breadth.core.world.verdict import Failure, Verdict, judge
from breadth.core.world.vocab import CHARS, PAD

SPLITS = ("test", "validation", "demonstrations")  # what `reset(options={"split": ...})` draws from; test first
CHARSET = CHARS.replace(PAD, "")  # every character a transcript or an action may hold (padding never)
MALFORMED = "malformed call"  # the end of an episode whose call the calculator could not parse


class BreadthEnv(gym.Env[str, str]):
    """One breadth environment as text: the transcript in, the model's next segment out, the calculator between."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # fps: Gymnasium asks for one; text has no frame rate

    def __init__(self, env: str, split_seed: int = 0, render_mode: str | None = None) -> None:
        self.family: Family = environment(env)  # EnvError (one line) for an unknown id or a removed version
        self.split_seed = split_seed  # the seed of the environment's order and splits (breadth's --seed)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode is None or one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = spaces.Text(MAX_LENGTH - 1, min_length=0, charset=CHARSET)  # the start token aside
        self.action_space = spaces.Text(MAX_LENGTH - 1, min_length=1, charset=CHARSET)
        self.problem: Problem | None = None
        self.episode: Episode | None = None
        self._ended: str | None = None  # how the episode ended (an End's value, or MALFORMED), None while it runs

    @property
    def id(self) -> str:
        """The environment's versioned id, as breadth and Gymnasium name it."""
        return env_id(self.family)

    def split(self, name: str) -> tuple[int, int]:
        """Where split `name` starts in the seeded order and how many problems it holds."""
        f = self.family
        starts = {"demonstrations": (0, f.demo_pool), "test": (f.demo_pool, f.test_pool)}
        starts["validation"] = (f.demo_pool + f.test_pool, f.validation_pool)
        if name not in starts:
            raise ValueError(f"no split {str(name)[:30]!r}; the splits are {', '.join(SPLITS)}")
        return starts[name]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        """A new episode on a problem drawn from a split (test unless `options["split"]` says otherwise)."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"split", "index"})
        if unknown:
            raise ValueError(f"unknown reset option {unknown[0]!r}; the options are split and index")
        name = options.get("split", SPLITS[0])
        start, size = self.split(name)
        index = options.get("index")
        if index is None:
            index = int(self.np_random.integers(size))
        elif not isinstance(index, int) or not 0 <= index < size:
            raise ValueError(f"the {name} split of {self.id} holds problems 0 to {size - 1}, not {index!r}")
        self.problem = self.family.problem(self.split_seed, start + index)
        self.episode = Episode(self.problem.prompt, max_length=MAX_LENGTH, syntax=self.problem.syntax)
        self._take_forced()  # the prompt
        self._ended = None
        return self._observation(), {"id": self.id, "split": name, "index": index}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        """Write the model's next segment; the calculator answers a closed call; reward 1 for a correct answer."""
        if self.episode is None or self._ended is not None:
            raise RuntimeError(f"{self.id}: the episode has ended or not begun: call reset()")
        if not isinstance(action, str) or action not in self.action_space:
            raise ValueError(
                f"an action is 1 to {self.action_space.max_length} characters of {CHARSET!r}, not {str(action)[:40]!r}"
            )
        ep, read = self.episode, 0
        calls = len(ep.calls)
        for char in action:
            ep.act(char)
            read += 1
            if ep.done or ep.forced:  # the episode ended, or the calculator has something to say
                break
        self._take_forced()
        info: dict[str, Any] = {"calls": len(ep.calls), "unread": action[read:]}
        if ep.done:
            self._ended = ep.end.value
        elif len(ep.calls) > calls and ep.calls[-1].result == ep.syntax.malformed:
            self._ended = MALFORMED
        if self._ended is None:
            return self._observation(), 0.0, False, False, info
        verdict = Verdict(False, Failure.MALFORMED_CALL) if self._ended == MALFORMED else judge(ep, self.problem)
        info |= {
            "end": self._ended,
            "verdict": verdict.describe(),  # `correct`, or the failure kind
            "failure": None if verdict.solved else verdict.failure.value,
            "answer": self.problem.answer,  # the true result
        }
        return self._observation(), float(verdict.solved), True, False, info

    def render(self) -> str | None:
        """`ansi`: the transcript so far, as text."""
        if self.render_mode == "ansi":
            return self._observation()
        return None

    def _take_forced(self) -> None:
        """Append what the model does not write: the prompt, or the calculator's result."""
        while self.episode.next_forced() is not None:
            pass

    def _observation(self) -> str:
        return self.episode.transcript.text


ENTRY_POINT = f"{__name__}:BreadthEnv"


def register_all() -> list[str]:
    """Register every environment of breadth's registry with Gymnasium (once; a later call adds those added
    since); the ids registered."""
    ids = []
    for family in environments():
        name = env_id(family)
        if name not in gym.registry:
            gym.register(id=name, entry_point=ENTRY_POINT, kwargs={"env": name})
        ids.append(name)
    return ids


register_all()
