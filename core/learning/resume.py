"""A long run's state on disk every so many steps, so that a run stopped partway goes on where it was.

A sweep's local worker trains with a `Resume` on a file named after the run's key: every `every` steps it writes
the weights, the optimiser's state, the random generators' states and the losses so far (safetensors, with the
run's key, its step and its seconds as JSON in the file's header; written atomically, never pickled). Run again,
the same run reads it back and takes its next step from there, bit for bit the run it would have been uninterrupted
(one torch thread: tests/test_resume.py). A file that is not this run's, or not readable, is ignored: the run starts
from its first step, as it would have without it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as from_bytes
from safetensors.torch import save as to_bytes

from breadth.core.storage.files import UserFileError, read_regular, write_atomic

FORMAT = "breadth-resume/1"
LIMIT = 256 * 1024 * 1024  # bytes: far above any state of a model under 2 M parameters


class Resume:
    """Where a run keeps its state (`path`), whose run it is (`key`), and how often it writes it (`every` steps)."""

    def __init__(self, path: str | os.PathLike, key: str, every: int):
        if every < 1:
            raise ValueError("a run's state is written every 1 or more steps")
        self.path, self.key, self.every = Path(path), key, every
        self.resumed_at = 0  # the step the run went on from (0: it started at its first)
        self.seconds_before = 0.0  # training seconds spent before that step, in earlier pieces
        self.unsaved = 0  # states that could not be written (the run went on without them)

    def restore(
        self, model: torch.nn.Module, opt: torch.optim.Optimizer, generators: Sequence[torch.Generator]
    ) -> list[float]:
        """Put the saved state into `model`, `opt`, the global RNG and `generators`: the losses of the steps already
        taken (none, and nothing changed, when there is no state of this run)."""
        state = self._read(model, opt, len(generators))
        if state is None:
            return []
        tensors, meta = state
        model.load_state_dict({name[len("model.") :]: t for name, t in tensors.items() if name.startswith("model.")})
        saved = opt.state_dict()
        saved["state"] = {
            index: {name: tensors[f"opt.{index}.{name}"] for name in meta["opt"][str(index)]}
            for index in map(int, meta["opt"])
        }
        opt.load_state_dict(saved)
        torch.set_rng_state(tensors["rng.global"])
        for i, gen in enumerate(generators):
            gen.set_state(tensors[f"rng.{i}"])
        self.resumed_at, self.seconds_before = int(meta["step"]), float(meta["seconds"])
        return tensors["losses"].tolist()

    def save(
        self,
        model: torch.nn.Module,
        opt: torch.optim.Optimizer,
        generators: Sequence[torch.Generator],
        losses: Sequence[float],
        seconds: float,
    ) -> None:
        """Write the state after step `len(losses)` (atomically: a reader sees the old state or the new); a state
        that cannot be written is counted in `unsaved`, and the run goes on."""
        tensors = {f"model.{name}": t.detach().clone() for name, t in model.state_dict().items()}
        names: dict[str, list[str]] = {}
        for index, state in opt.state_dict()["state"].items():
            names[str(index)] = sorted(state)
            tensors |= {f"opt.{index}.{name}": torch.as_tensor(state[name]).clone() for name in state}
        tensors["rng.global"] = torch.get_rng_state()
        tensors |= {f"rng.{i}": gen.get_state() for i, gen in enumerate(generators)}
        tensors["losses"] = torch.tensor(list(losses), dtype=torch.float64)
        meta = {"format": FORMAT, "key": self.key, "step": len(losses), "seconds": seconds, "opt": names}
        try:
            write_atomic(self.path, to_bytes(tensors, metadata={"resume": json.dumps(meta)}))
        except OSError:  # a full disk, a folder that cannot be made: the run goes on, only without a state to resume
            self.unsaved += 1

    def clear(self) -> None:
        """Remove the state (the run is stored, or failed): a missing file is fine."""
        self.path.unlink(missing_ok=True)

    def _read(self, model: torch.nn.Module, opt: torch.optim.Optimizer, generators: int) -> tuple[dict, dict] | None:
        """The state's tensors and metadata if the file is this run's and fits this model, else None."""
        try:
            data = read_regular(self.path, LIMIT)
            size = int.from_bytes(data[:8], "little")
            meta = json.loads(json.loads(data[8 : 8 + size])["__metadata__"]["resume"])
            tensors = from_bytes(data)
        except (UserFileError, OSError, ValueError, KeyError, TypeError, SafetensorError):
            return None  # no state, or none of ours: start from the first step
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("key") != self.key:
            return None
        wanted = {f"model.{name}": t for name, t in model.state_dict().items()}
        if any(name not in tensors or tensors[name].shape != t.shape for name, t in wanted.items()):
            return None
        expected = ["rng.global", "losses", *(f"rng.{i}" for i in range(generators))]
        if any(name not in tensors for name in expected) or len(tensors["losses"]) != meta.get("step"):
            return None
        try:
            opt_names = {int(i): list(n) for i, n in meta["opt"].items()}
            if any(f"opt.{i}.{name}" not in tensors for i, n in opt_names.items() for name in n):
                return None
            float(meta["seconds"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return tensors, meta
