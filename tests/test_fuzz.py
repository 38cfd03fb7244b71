"""Property-based tests: every parser and reader gives a valid result or its one error type with one line.

Each property bounds its examples (`max_examples`), so CI time is bounded; an unexpected exception type fails the
test with the smallest input found, and a hang fails it at the test run's timeout (pyproject). No per-example
deadline: one is a timing assertion, and it failed on a loaded machine with nothing wrong.
"""

from __future__ import annotations

import json
import string
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from breadth.core.engine import protocol as p
from breadth.core.storage.header import CheckpointError, read_header
from breadth.core.world.arithmetic.calculator import MALFORMED, SYNTAX, calculate
from breadth.core.world.environments.mix import Mix, MixError
from breadth.core.world.environments.probe import SumError, parse_sum
from breadth.core.world.episodes.episode import MAX_CALLS, MAX_LENGTH, Episode
from breadth.core.world.episodes.scores import MetadataError
from breadth.core.world.runs.records import RunMeta
from breadth.core.world.runs.settings import FinetuneSettings, SettingsError
from breadth.core.world.text.vocab import CHARS

QUICK = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
FILES = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

typed = st.text(alphabet=string.digits + "+-= =x²٣\n\t:" + string.ascii_letters, max_size=40) | st.builds(
    lambda name, rest: f"{name}:{rest}",
    st.sampled_from(["a3x2", "2d", "sub_3x1", "S4X1", "zz"]),
    st.text(string.digits + "+- ", max_size=20),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def _one_line(error: BaseException) -> None:
    message = str(error)
    assert message and "\n" not in message


@QUICK
@given(typed)
def test_sum_parser_gives_a_problem_or_one_sum_error(text):
    """Any typed text is a sum that fits the calculator and the context, or one SumError line."""
    try:
        problem = parse_sum(text)
    except SumError as e:
        _one_line(e)
        return
    assert all(SYNTAX.parse(call) is not None for call in problem.expected_calls())
    assert len(problem.demonstration().text) + 1 <= MAX_LENGTH


@QUICK
@given(st.text(alphabet="two_digithre=,0123456789 x", max_size=50))
def test_mix_parser_gives_a_mix_or_one_mix_error(text):
    """Any text is a mix that round-trips through its spec, or one MixError line."""
    try:
        mix = Mix.parse(text)
    except MixError as e:
        _one_line(e)
        return
    assert Mix.parse(mix.spec()) == mix and mix.total > 0


@QUICK
@given(st.text(max_size=30) | json_values)
def test_calculator_never_raises(body):
    """The calculator answers anything with a result and `|`, or the error marker."""
    out = calculate(body)
    assert out == MALFORMED or (out.endswith("|") and out[:-1].lstrip("-").isdigit())


@QUICK
@given(st.text(alphabet=CHARS[1:], max_size=80), typed)
def test_episode_loop_ends_within_its_limits_on_any_actions(actions, prompt):
    """Fed any characters of the vocabulary, an episode never raises and ends within its length and call limits."""
    episode = Episode(prompt[:10])
    fed = iter(actions)
    for _ in range(200):
        if episode.done:
            break
        if episode.next_forced() is None:
            episode.act(next(fed, "|"))
    assert episode.done
    assert len(episode.calls) <= MAX_CALLS


@QUICK
@given(
    st.text(max_size=200)
    | json_values.map(json.dumps)
    | st.builds(
        json.dumps,
        st.fixed_dictionaries(
            {"type": st.sampled_from(["Load", "Train", "Stop", "Probe", "Quit", "Ready", "Trained", "Failed"])},
            optional={
                "id": json_values,
                "key": json_values,
                "path": json_values,
                "text": json_values,
                "settings": json_values,
                "mix": json_values,
                "base": json_values,
                "out_dir": json_values,
            },
        ),
    )
)
def test_protocol_decoder_gives_a_message_or_one_protocol_error(line):
    """Any line decodes to a message whose fields have their declared types, or one ProtocolError line."""
    try:
        message = p.decode(line, p.MAX_COMMAND)
    except p.ProtocolError as e:
        _one_line(e)
        return
    assert p.decode(p.encode(message)) == message


@QUICK
@given(json_values)
def test_settings_and_run_records_from_any_json(data):
    """Any JSON is FinetuneSettings or one SettingsError; a RunMeta or one MetadataError."""
    for read, error in ((FinetuneSettings.from_dict, SettingsError), (RunMeta.from_dict, MetadataError)):
        try:
            read(data)
        except error as e:
            _one_line(e)


@pytest.fixture(scope="module")
def valid_file(tmp_path_factory) -> bytes:
    """The bytes of a small valid checkpoint."""
    import torch

    from breadth.core.learning import checkpoint
    from breadth.core.learning.model import GPT, GPTConfig

    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=1, n_head=2, n_embd=8))
    path = tmp_path_factory.mktemp("valid") / "m.safetensors"
    return checkpoint.save(model, RunMeta("finetune", seed=1, mix="two_digit=4"), path).read_bytes()


def _check_reads(path: Path) -> None:
    """The header reader and the loader each give a result or one CheckpointError line naming the path."""
    from breadth.core.learning import checkpoint

    for read in (read_header, checkpoint.load):
        try:
            read(path)
        except CheckpointError as e:
            _one_line(e)
            assert str(path) in str(e)


@FILES
@given(st.binary(max_size=300))
def test_checkpoint_reader_on_random_bytes(tmp_path, data):
    """Random bytes as a checkpoint give one CheckpointError line."""
    path = tmp_path / "random.safetensors"
    path.write_bytes(data)
    _check_reads(path)


@FILES
@given(st.data())
def test_checkpoint_reader_on_mutated_files(tmp_path, valid_file, data):
    """A valid checkpoint with bytes of its header or data flipped, cut or extended loads or gives one line."""
    blob = bytearray(valid_file)
    (n,) = struct.unpack("<Q", bytes(blob[:8]))
    for _ in range(data.draw(st.integers(1, 4))):
        where = (
            data.draw(st.integers(0, 8 + n - 1))
            if data.draw(st.booleans())
            else data.draw(st.integers(0, len(blob) - 1))
        )
        blob[where] = data.draw(st.integers(0, 255))
    cut = data.draw(st.sampled_from([None, 0, 8, n // 2, len(blob) - 1]))
    if cut is not None:
        blob = blob[:cut]
    blob += data.draw(st.binary(max_size=8))
    path = tmp_path / "mutated.safetensors"
    path.write_bytes(bytes(blob))
    _check_reads(path)


@FILES
@given(st.data())
def test_checkpoint_reader_on_mutated_metadata(tmp_path, valid_file, data):
    """A valid checkpoint whose metadata fields are replaced by any JSON loads or gives one line."""
    (n,) = struct.unpack("<Q", valid_file[:8])
    header = json.loads(valid_file[8 : 8 + n])
    meta = json.loads(header["__metadata__"]["breadth"])
    for key in data.draw(st.lists(st.sampled_from(sorted(meta) + ["extra"]), min_size=1, max_size=3)):
        meta[key] = data.draw(json_values)
    if data.draw(st.booleans()):
        model = dict(meta.get("model") or {}) if isinstance(meta.get("model"), dict) else {}
        model[data.draw(st.sampled_from(["n_layer", "n_embd", "n_head", "block_size", "dropout", "x"]))] = data.draw(
            json_values
        )
        meta["model"] = model
    header["__metadata__"]["breadth"] = json.dumps(meta)
    head = json.dumps(header).encode()
    path = tmp_path / "meta.safetensors"
    path.write_bytes(struct.pack("<Q", len(head)) + head + valid_file[8 + n :])
    _check_reads(path)
