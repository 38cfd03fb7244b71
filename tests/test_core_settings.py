"""Settings are checked once, by their dataclasses: the command line, the engine and JSON refuse the same values."""

from __future__ import annotations

import pytest

from breadth.core.cli.main import USAGE_ERROR, main
from breadth.core.engine import protocol as p
from breadth.core.engine.session import Session
from breadth.core.world.episodes.scores import HELD_OUT
from breadth.core.world.runs.settings import (
    FinetuneSettings,
    PretrainSettings,
    SettingsError,
    held_out_count,
    held_out_from_text,
)

BAD = [  # (field, text) that every front end must refuse
    ("dropout", "0.95"),
    ("dropout", "-0.1"),
    ("lr", "0"),
    ("lr", "nan"),
    ("lr", "fast"),
    ("steps", "0"),
    ("steps", "2.5"),
    ("batch_size", "0"),
    ("weight_decay", "-1"),
    ("seed", "-3"),
    ("seed", str(2**64)),
]


@pytest.mark.parametrize("field, text", BAD)
def test_settings_refuse_bad_values_in_one_line(field, text):
    """Each bad value raises one SettingsError line naming the setting, from text and from JSON alike."""
    with pytest.raises(SettingsError) as info:
        FinetuneSettings.from_text(**{field: text})
    message = str(info.value)
    assert "\n" not in message and field.replace("_", " ") in message


@pytest.mark.parametrize("field, text", BAD)
def test_command_line_refuses_what_the_settings_refuse(capsys, field, text):
    """`breadth train --FIELD TEXT` exits 2 with one line before any work starts."""
    flag = "--" + field.replace("_", "-")
    argv = ["train", "--mix", "two_digit=4", "--out", "/nonexistent/never-written.safetensors", flag, text]
    assert main(argv) == USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and field.replace("_", " ") in err


@pytest.mark.parametrize("data", [{"dropout": 0.95}, {"steps": "400"}, {"seed": True}, {"lr": None}, {"colour": 1}])
def test_engine_refuses_what_the_settings_refuse(data, tmp_path):
    """A Train command whose settings the dataclass refuses fails with one Failed line, and nothing trains."""
    events: list = []

    class NoModels:
        def train(self, *args):
            raise AssertionError("the engine trained with settings it should have refused")

    Session(events.append, NoModels()).handle(p.Train(1, "two_digit=4", data, "/base", str(tmp_path)))
    (failed,) = events
    assert isinstance(failed, p.Failed) and failed.id == 1 and "\n" not in failed.message


def test_defaults_are_valid_and_round_trip_through_json():
    """The defaults pass their own checks and survive to_dict/from_dict unchanged."""
    for cls in (FinetuneSettings, PretrainSettings):
        assert cls.from_dict(cls().to_dict()) == cls()


def test_held_out_is_a_positive_number_or_all():
    """The held-out size is a whole number from 1, or `all` (None); 30 by default, as on the plate."""
    assert HELD_OUT == 30
    assert held_out_from_text("all") is None and held_out_from_text(" 200 ") == 200
    assert held_out_count(None) is None
    for bad in ("0", "-1", "x", "1.5"):
        with pytest.raises(SettingsError):
            held_out_from_text(bad)
