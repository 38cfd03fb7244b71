"""Typed records of what an evaluation scored, read from JSON in one place: an environment's held-out score, the failed
episodes it keeps, and the episodes a reward run sampled.

Checkpoint metadata and the engine's events carry these as JSON; each `from_dict` is the only reader of its
record, and it refuses data of the wrong shape with one line (`MetadataError`), so no other module indexes a
metadata dict by string or computes a rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from breadth.core.world.text.transcript import Role, Segment

HELD_OUT = 30  # held-out sums per environment a score counts by default, as on the plate (its test split's first ones)
EXAMPLES_KEPT = 3  # failed transcripts a score keeps per environment and run (the first ones, in held-out order)
_EXAMPLE_CHARS = 200  # longest example text read back (episodes are at most the 64-character context)


class MetadataError(ValueError):
    """Run metadata of an unexpected shape; the message is one line for people."""


@dataclass(frozen=True)
class FailedEpisode:
    """An unsolved held-out episode kept with its environment's score: why it failed and what was written."""

    failure: str  # a Failure value
    segments: tuple[Segment, ...]  # the transcript, by who wrote each part

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)

    def to_dict(self) -> dict:
        return {"failure": self.failure, "segments": [[s.role.value, s.text] for s in self.segments]}

    @classmethod
    def from_dict(cls, env: str, data: object) -> FailedEpisode:
        """The example stored as `data`; MetadataError if it has the wrong shape or is implausibly long."""
        where = f"a failed episode of {env}"
        if not isinstance(data, dict) or not isinstance(data.get("failure"), str):
            raise MetadataError(f"{where} must be a mapping with a failure kind")
        out = _segments(data.get("segments"), where)
        if sum(len(s.text) for s in out) > _EXAMPLE_CHARS or len(data["failure"]) > 40:
            raise MetadataError(f"{where} is longer than any episode")
        return cls(data["failure"], tuple(out))


def _segments(segments: object, where: str) -> list[Segment]:
    """Segments stored as [[role, text], ...]; MetadataError (one line naming `where`) for any other shape."""
    if not isinstance(segments, list):
        raise MetadataError(f"{where} must list its segments")
    out = []
    for seg in segments:
        if not (isinstance(seg, list) and len(seg) == 2 and all(isinstance(x, str) for x in seg)):
            raise MetadataError(f"{where}: a segment must be [role, text]")
        try:
            out.append(Segment(Role(seg[0]), seg[1]))
        except ValueError:
            raise MetadataError(f"{where}: no role {seg[0][:20]!r}") from None
    return out


MAX_SAMPLES = 16  # episodes of a sampled group a front end is sent (a group holds up to 64)
_SAMPLE_CHARS = 1_100  # longest sampled episode read back (the largest context is 1,024 characters)


@dataclass(frozen=True)
class SampledEpisode:
    """One episode a reward run sampled, as a front end shows it: who wrote what, its reward and its verdict."""

    segments: tuple[Segment, ...]  # the transcript, by who wrote each part
    reward: float  # 1 for a correct answer, 0 otherwise
    failure: str | None  # a Failure value when not correct
    expected: bool  # correct with exactly the expected calls (not by a coincidence such as a leading zero)

    def to_dict(self) -> dict:
        return {
            "segments": [[s.role.value, s.text] for s in self.segments],
            "reward": self.reward,
            "failure": self.failure,
            "expected": self.expected,
        }

    @classmethod
    def from_dict(cls, data: object) -> SampledEpisode:
        """The episode sent as `data`; MetadataError (one line) if it has the wrong shape or is too long."""
        where = "a sampled episode"
        if not isinstance(data, dict):
            raise MetadataError(f"{where} must be a mapping")
        segments = _segments(data.get("segments"), where)
        reward, failure, expected = data.get("reward"), data.get("failure"), data.get("expected")
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not 0 <= reward <= 1:
            raise MetadataError(f"{where}: its reward must be a number from 0 to 1")
        if not (failure is None or (isinstance(failure, str) and len(failure) <= 40)) or not isinstance(expected, bool):
            raise MetadataError(f"{where}: its failure must be a kind or null, and expected true or false")
        if sum(len(s.text) for s in segments) > _SAMPLE_CHARS:
            raise MetadataError(f"{where} is longer than any episode")
        return cls(tuple(segments), float(reward), failure, expected)


GROUP_ENVIRONMENT = "family"  # a sampled group's environment in its JSON (`to_dict`): the key it was always sent under


@dataclass(frozen=True)
class SampledGroup:
    """The episodes a reward run sampled for one prompt at one step (at most MAX_SAMPLES of them)."""

    prompt: str  # the sum as posed: `3+4+5=`
    environment: str  # the environment holding it
    episodes: tuple[SampledEpisode, ...]
    size: int  # episodes in the whole group (G), at least as many as shown

    def to_dict(self) -> dict:
        return {
            "prompt": self.prompt,
            GROUP_ENVIRONMENT: self.environment,
            "episodes": [e.to_dict() for e in self.episodes],
            "size": self.size,
        }

    @classmethod
    def from_dict(cls, data: object) -> SampledGroup:
        """The group sent as `data`; MetadataError (one line) if it has the wrong shape or too many episodes."""
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("prompt"), str)
            or not isinstance(data.get(GROUP_ENVIRONMENT), str)
        ):
            raise MetadataError("a sampled group must be a mapping with its prompt and environment")
        if len(data["prompt"]) > _SAMPLE_CHARS or len(data[GROUP_ENVIRONMENT]) > 80:
            raise MetadataError("a sampled group's prompt or environment is longer than any")
        episodes = data.get("episodes")
        if not isinstance(episodes, list) or not 0 < len(episodes) <= MAX_SAMPLES:
            raise MetadataError(f"a sampled group must list 1 to {MAX_SAMPLES} episodes")
        size = data.get("size", len(episodes))
        if isinstance(size, bool) or not isinstance(size, int) or size < len(episodes):
            raise MetadataError("a sampled group's size must be a whole number, at least its episodes shown")
        return cls(data["prompt"], data[GROUP_ENVIRONMENT], tuple(SampledEpisode.from_dict(e) for e in episodes), size)


@dataclass(frozen=True)
class HeldOutScore:
    """An environment's held-out result: solved of total, and how many unsolved episodes failed each way."""

    environment: str
    solved: int
    total: int
    failures: dict[str, int] = field(default_factory=dict)  # failure kind (a Failure value) -> count
    examples: tuple[FailedEpisode, ...] = ()  # the first few unsolved episodes (EXAMPLES_KEPT), if kept

    @property
    def rate(self) -> float:
        """Share solved, 0..1 (0 when nothing was scored)."""
        return self.solved / self.total if self.total else 0.0

    def percent(self) -> str:
        """`90%`, or `-` when nothing was scored."""
        return f"{100 * self.rate:.0f}%" if self.total else "-"

    def to_dict(self) -> dict:
        """JSON form, failures most frequent first."""
        kinds = dict(sorted(self.failures.items(), key=lambda kv: -kv[1]))
        out: dict = {"solved": self.solved, "total": self.total, "failures": kinds}
        if self.examples:
            out["examples"] = [e.to_dict() for e in self.examples]
        return out

    @classmethod
    def from_dict(cls, env: str, data: object) -> HeldOutScore:
        """The score stored as `data` for `env`; MetadataError if it has the wrong shape."""
        if not isinstance(data, dict):
            raise MetadataError(f"score of {env} must be a mapping, not {type(data).__name__}")
        solved, total = (
            whole_count(data.get("solved"), f"{env} solved"),
            whole_count(data.get("total"), f"{env} total"),
        )
        if solved > total:
            raise MetadataError(f"{env}: solved {solved} is more than total {total}")
        failures = data.get("failures", {})
        if not isinstance(failures, dict):
            raise MetadataError(f"failures of {env} must be a mapping")
        examples = data.get("examples", [])
        if not isinstance(examples, list) or len(examples) > EXAMPLES_KEPT:
            raise MetadataError(f"examples of {env} must be a list of at most {EXAMPLES_KEPT}")
        kinds = {str(k): whole_count(v, f"{env} failure count") for k, v in failures.items()}
        return cls(env, solved, total, kinds, tuple(FailedEpisode.from_dict(env, e) for e in examples))


def whole_count(x: object, what: str) -> int:
    """`x` as a stored count: a whole number from 0; MetadataError (one line naming `what`) otherwise."""
    if not isinstance(x, int) or isinstance(x, bool) or x < 0:
        raise MetadataError(f"{what} must be a whole number from 0, not {x!r}")
    return x
