"""Every breadth environment as a Gymnasium text environment: `gymnasium.make("breadth/add-2x2-v1")`.

Importing this module registers the whole registry with Gymnasium under breadth's own ids (or let
`gymnasium.make("breadth.core.world.gym_envs:breadth/add-2x2-v1")` import it), and the plate's old
ids (`breadth/two-digit-v1`, `breadth/three-digit-v1`) as aliases that make the same environments. It is the
only module that imports gymnasium, an optional extra: `pip install -c constraints.txt '.[gym]'`.

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

Every argument is checked where it arrives (`gymnasium.make`'s keywords, `reset`'s seed and options, `step`'s
action): an odd value is a ValueError or TypeError of one line saying what is taken, never an error from deep
inside, and nothing is written anywhere. Two of Gymnasium's own steps are kept out of the way for that:
`gymnasium.make` calls `make_env`, not the class (for a class it reads `render_mode` as text before the class can
check it: `render_mode=3` was an AttributeError about `endswith`), and Gymnasium's passive checker is off by
default (`disable_env_checker`; `check_env` passes on these environments): in gymnasium 1.4.0 its wrapper fails
the first step after a first `reset` that raised with "TypeError: cannot unpack non-iterable NoneType object".
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

try:
    import gymnasium as gym
    from gymnasium import spaces
except ModuleNotFoundError as e:  # an optional extra: say how to get it
    raise ModuleNotFoundError(
        "breadth's Gymnasium environments need gymnasium: pip install -c constraints.txt '.[gym]'", name=e.name
    ) from None

from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.registry import env_id, environment, every_environment, old_ids
from breadth.core.world.environments.task import Task
from breadth.core.world.episodes.episode import MAX_LENGTH, Episode
from breadth.core.world.episodes.verdict import Failure, Verdict, judge
from breadth.core.world.runs.settings import MAX_SEED
from breadth.core.world.text.vocab import CHARS, PAD

SPLITS = ("test", "validation", "demonstrations")  # what `reset(options={"split": ...})` draws from; test first
CHARSET = CHARS.replace(PAD, "")  # every character a transcript or an action may hold (padding never)
MALFORMED = "malformed call"  # the end of an episode whose call the calculator could not parse


class BreadthEnv(gym.Env[str, str]):
    """One breadth environment as text: the transcript in, the model's next segment out, the calculator between."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # fps: Gymnasium asks for one; text has no frame rate

    def __init__(self, env: str, split_seed: int = 0, render_mode: str | None = None) -> None:
        self.environment: Task = environment(env)  # EnvError (one line) for an unknown id or a removed version
        if not _whole(split_seed) or not 0 <= split_seed <= MAX_SEED:
            raise ValueError(
                f"split_seed is a whole number from 0 to {MAX_SEED:,} (breadth's --seed), not {_shown(split_seed)}"
            )
        self.split_seed = int(split_seed)  # the seed of the environment's order and splits (breadth's --seed)
        modes = self.metadata["render_modes"]
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode in modes):
            raise ValueError(f"render_mode is None or one of {modes}, not {_shown(render_mode)}")
        self.render_mode = render_mode
        self.observation_space = spaces.Text(MAX_LENGTH - 1, min_length=0, charset=CHARSET)  # the start token aside
        self.action_space = spaces.Text(MAX_LENGTH - 1, min_length=1, charset=CHARSET)
        self.problem: Problem | None = None
        self.episode: Episode | None = None
        self._ended: str | None = None  # how the episode ended (an End's value, or MALFORMED), None while it runs

    @property
    def id(self) -> str:
        """The environment's versioned id, as breadth and Gymnasium name it."""
        return env_id(self.environment)

    def split(self, name: str) -> tuple[int, int]:
        """Where split `name` starts in the seeded order and how many problems it holds."""
        f = self.environment
        starts = {"demonstrations": (0, f.demo_pool), "test": (f.demo_pool, f.test_pool)}
        starts["validation"] = (f.demo_pool + f.test_pool, f.validation_pool)
        if not isinstance(name, str) or name not in starts:
            raise ValueError(f"no split {_shown(name)}; the splits are {', '.join(SPLITS)}")
        return starts[name]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        """A new episode on a problem drawn from a split (test unless `options["split"]` says otherwise)."""
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"reset's options are a dict such as {{'split': 'validation'}}, not {_shown(options)}")
        if seed is not None and (not _whole(seed) or seed < 0):
            raise ValueError(f"seed is None or a whole number from 0, not {_shown(seed)}")
        super().reset(seed=None if seed is None else int(seed))  # numpy's integers too, which Gymnasium refuses
        options = dict(options or {})
        unknown = sorted((_shown(k) for k in options if k not in ("split", "index")), key=str)
        if unknown:
            raise ValueError(f"unknown reset option {unknown[0]}; the options are split and index")
        name = options.get("split", SPLITS[0])
        start, size = self.split(name)
        index = options.get("index")
        if index is None:
            index = int(self.np_random.integers(size))
        elif not _whole(index) or not 0 <= index < size:
            raise ValueError(f"the {name} split of {self.id} holds problems 0 to {size - 1}, not {_shown(index)}")
        index = int(index)
        self.problem = self.environment.problem(self.split_seed, start + index)
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
                f"an action is 1 to {self.action_space.max_length} characters of {CHARSET!r}, not {_shown(action)}"
            )
        action = str(action)  # a str subclass (numpy's str_) read as the text it holds
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


def _whole(value: object) -> bool:
    """True for a whole number (a Python or numpy integer), never a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """A value as an error message quotes it: its repr on one line, cut to 40 characters (text cut before quoting)."""
    if isinstance(value, str):
        return repr(value[:40])
    try:
        text = " ".join(repr(value).split())  # a numpy array's repr spans lines
    except Exception:  # noqa: BLE001 -- an object whose repr fails is still named
        text = f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:39] + "…"


def make_env(env: str, split_seed: int = 0, render_mode: str | None = None, **unknown: Any) -> gym.Env:
    """What `gymnasium.make` calls for a breadth id: the environment, every argument checked by it (`ansi_list`
    collects the ansi renders, as Gymnasium's RenderCollection does for environments it makes from a class)."""
    if unknown:
        raise TypeError(f"{_shown(env)} takes split_seed and render_mode, not {_shown(sorted(unknown)[0])}")
    if render_mode == "ansi_list":
        from gymnasium.wrappers import RenderCollection

        return RenderCollection(BreadthEnv(env, split_seed, "ansi"))
    return BreadthEnv(env, split_seed, render_mode)


ENTRY_POINT = f"{__name__}:make_env"


def register_all() -> list[str]:
    """Register every environment of breadth's registry with Gymnasium (once; a later call adds those added
    since), and each old id as an alias making its environment (`old_ids`); the environments' ids registered."""
    ids = []
    for env in every_environment():
        name = env_id(env)
        if name not in gym.registry:
            gym.register(id=name, entry_point=ENTRY_POINT, kwargs={"env": name}, disable_env_checker=True)
        ids.append(name)
    for old, name in old_ids().items():
        if old not in gym.registry:
            gym.register(id=old, entry_point=ENTRY_POINT, kwargs={"env": name}, disable_env_checker=True)
    return ids


register_all()
