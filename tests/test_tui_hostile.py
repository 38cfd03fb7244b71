"""The app against hostile paths, files and failures: it answers in one line, keeps running and loses nothing."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fake_engine import FakeEngine, ScriptedModels
from safetensors.numpy import load_file, save
from textual.widgets import Input
from tui_helpers import fake_app, type_text, wait_for

import breadth.tui.app
from breadth.core.engine import protocol as p
from breadth.core.storage.header import KEY, read_header
from breadth.core.storage.presets import PRESETS
from breadth.tui import engine as engine_module
from breadth.tui.app import DEFAULT_MODEL, BreadthApp
from breadth.tui.engine import EngineGone, EngineProcess
from breadth.tui.screens.checkpoint_prompts import LoadPrompt
from breadth.tui.screens.path_prompt import CHECKING, PathPrompt

SIZE = (100, 32)


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """The user's breadth folder (app.log, runs) inside the test's own folder, never the real home."""
    monkeypatch.setenv("BREADTH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BREADTH_RUNS", raising=False)
    return tmp_path / "home"


def _shipped(name: str = "two_digit_70") -> Path:
    return Path(PRESETS[name].shipped)


async def _submit(pilot, key: str, text: str) -> PathPrompt:
    """Open the prompt bound to `key`, type `text` into it, press Enter and wait for the check's answer."""
    app = pilot.app
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
    prompt = app.screen
    prompt.query_one("#path", Input).value = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: not prompt.is_current or prompt.message != CHECKING, timeout=5, what="the check")
    return prompt


def _list_for_a_dict(tmp_path: Path) -> Path:
    """A shipped checkpoint rewritten with `scores` a list where the metadata must have a mapping."""
    meta = read_header(_shipped()).meta | {"scores": [1, 2, 3]}
    path = tmp_path / "list-scores.safetensors"
    path.write_bytes(save(load_file(_shipped()), metadata={KEY: json.dumps(meta)}))
    return path


def _fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "pipe.safetensors")
    return tmp_path / "pipe.safetensors"


def _loop(tmp_path: Path) -> Path:
    (tmp_path / "a.safetensors").symlink_to(tmp_path / "b.safetensors")
    (tmp_path / "b.safetensors").symlink_to(tmp_path / "a.safetensors")
    return tmp_path / "a.safetensors"


HOSTILE_LOADS = {
    "fifo": (_fifo, "FIFO"),
    "no such user": (lambda tmp: "~nosuchuser/x.safetensors", "no such user"),
    "symlink loop": (_loop, "symlink loop"),
    "directory": (lambda tmp: tmp, "directory"),
    "device": (lambda tmp: "/dev/null", "device"),
    "list for a dict": (_list_for_a_dict, "mapping"),
    "markup in the path": (lambda tmp: f"{tmp}/[/]x", "no such"),
}


@pytest.mark.parametrize("case", list(HOSTILE_LOADS))
async def test_loading_a_hostile_path_is_refused_in_one_line_and_the_app_runs_on(tmp_path, case):
    """Ctrl+O on a FIFO, ~nosuchuser, a symlink loop, a folder, a device or bad metadata: one line, no new model."""
    make, expected = HOSTILE_LOADS[case]
    path = make(tmp_path)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        before = dict(app.entries)
        prompt = await _submit(pilot, "ctrl+o", str(path))
        assert app.screen is prompt and app.is_running
        assert expected in prompt.message and "\n" not in prompt.message
        assert prompt.query_one("#path-message").has_class("error")
        assert app.entries == before and app.current == DEFAULT_MODEL
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PathPrompt), timeout=5, what="the prompt to close")


async def test_a_slow_check_says_checking_and_escape_closes_the_prompt_at_once(tmp_path, monkeypatch):
    """While the header is read the prompt says 'checking...'; Escape closes it then, and the late answer is ignored."""
    release, started, finished = threading.Event(), threading.Event(), threading.Event()
    real = LoadPrompt.resolve

    def slow(self, text):
        started.set()
        release.wait(5)
        try:
            return real(self, text)
        finally:
            finished.set()

    monkeypatch.setattr(LoadPrompt, "resolve", slow)
    good = tmp_path / "good.safetensors"
    good.write_bytes(_shipped().read_bytes())
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        before = dict(app.entries)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
        prompt = app.screen
        prompt.query_one("#path", Input).value = str(good)
        await pilot.press("enter")
        await wait_for(pilot, started.is_set, timeout=5, what="the check to start")
        assert prompt.message == CHECKING
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PathPrompt), timeout=5, what="the prompt to close")
        release.set()
        await wait_for(pilot, finished.is_set, timeout=5, what="the abandoned check to end")
        await pilot.pause()
        assert app.entries == before and app.current == DEFAULT_MODEL


async def test_saving_over_a_file_a_device_or_the_checkpoint_itself_is_refused(tmp_path):
    """Ctrl+S to an existing file, to /dev/null or to the model's own file: refused inline, nothing overwritten."""
    own = tmp_path / "own.safetensors"
    own.write_bytes(_shipped().read_bytes())
    other = tmp_path / "other.safetensors"
    other.write_bytes(b"someone else's file")
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        prompt = await _submit(pilot, "ctrl+o", str(own))
        await wait_for(pilot, lambda: app.current == f"file:{own.resolve()}", timeout=5, what="the load")
        for target, expected in [(other, "exists"), ("/dev/null", "device"), (own, "input")]:
            prompt = await _submit(pilot, "ctrl+s", str(target))
            assert app.screen is prompt and expected in prompt.message, prompt.message
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, PathPrompt), timeout=5, what="the prompt")
    assert other.read_bytes() == b"someone else's file"
    assert own.read_bytes() == _shipped().read_bytes()


async def test_an_error_in_a_handler_is_shown_and_logged_and_the_app_runs_on(home, monkeypatch):
    """A bug in the playground's Enter handler becomes an error notification naming app.log, which has the traceback."""

    def broken(text):
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setattr("breadth.tui.widgets.playground.parse_sum", broken)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "2+3")
        await pilot.press("enter")
        await wait_for(pilot, lambda: list(app._notifications), timeout=5, what="a notification")
        (note,) = list(app._notifications)
        assert note.severity == "error" and "a bug nobody foresaw" in note.message and "app.log" in note.message
        assert app.is_running
        await type_text(pilot, "4")  # the app still takes keys
        await pilot.pause()
        assert app.playground.query_one("#sum", Input).value.endswith("4")
    log = (home / "app.log").read_text()
    assert "Traceback" in log and "RuntimeError: a bug nobody foresaw" in log


async def test_an_error_that_escapes_ends_the_app_with_code_1_and_its_traceback_logged(home):
    """An exception Textual itself catches (here in on_mount) gives return code 1 and lands in app.log."""

    class Broken(BreadthApp):
        CSS_PATH = Path(breadth.tui.app.__file__).with_name(BreadthApp.CSS_PATH)  # relative paths follow the subclass

        def on_mount(self) -> None:
            raise RuntimeError("broken at mount")

    app = Broken(engine_factory=FakeEngine)
    with pytest.raises(RuntimeError, match="broken at mount"):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
    assert app.return_code == 1
    assert "RuntimeError: broken at mount" in (home / "app.log").read_text()


def test_breadth_tui_exits_with_the_apps_return_code(monkeypatch, capsys):
    """`breadth-tui` exits with the app's return code (1 after a crash) and says where the traceback is."""
    from breadth.tui import __main__

    monkeypatch.setattr(BreadthApp, "run", lambda self: setattr(self, "_return_code", 1))
    assert __main__.main([]) == 1
    assert "app.log" in capsys.readouterr().err
    monkeypatch.setattr(BreadthApp, "run", lambda self: setattr(self, "_return_code", 0))
    assert __main__.main([]) == 0


async def test_after_the_restart_budget_a_sum_and_train_fail_at_once_saying_to_restart(monkeypatch):
    """Once the engine will not be restarted, a typed sum and Train fail at once, saying to restart breadth-tui."""
    monkeypatch.setattr("breadth.tui.supervisor.MAX_RESTARTS", 0)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.supervisor.engine is not None, timeout=5, what="the engine")
        app.supervisor.engine.kill()
        await wait_for(pilot, lambda: app.supervisor.gave_up, timeout=5, what="giving up")
        app.playground.focus_sum()
        await type_text(pilot, "2+3")
        await pilot.press("enter")
        await pilot.pause()
        message = str(app.playground.query_one("#sum-message").render())
        assert "restart breadth-tui" in message and "engine.log" in message
        assert not app.playground.probes  # nothing left waiting for the model
        await pilot.press("f2")
        await pilot.pause()
        assert app.training is None
        assert app.train_panel.status_is_error and "restart breadth-tui" in app.train_panel.status


async def test_a_model_the_engine_could_not_save_is_kept_and_saved_with_ctrl_s(tmp_path, monkeypatch):
    """A run whose file could not be written stays in memory, says so in red, and Ctrl+S has the engine write it."""

    def full_disk(self, model, run, folder, stem):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ScriptedModels, "save_new", full_disk)
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.train_panel
        panel.query_one("#steps", Input).value = "2"
        panel.set_value("held-out", "2")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.current == "run:1", timeout=10, what="the trained model")
        assert app.entries["run:1"].path == ""
        assert panel.status_is_error and "kept in memory" in panel.status and "Ctrl+S" in panel.status
        target = tmp_path / "kept.safetensors"
        await _submit(pilot, "ctrl+s", str(target))
        await wait_for(pilot, lambda: app.entries["run:1"].path == str(target), timeout=5, what="the engine's Save")
        saves = [c for c in app.supervisor.engine.sent if isinstance(c, p.Save)]
        assert saves == [p.Save(1, "run:1", str(target))]
        assert read_header(target).run.held_out == 2
        assert any(n.message == f"saved {target}" for n in app._notifications)


class PoisonEngine(FakeEngine):
    """A fake engine that dies when asked to load a file whose name holds 'poison'."""

    def send(self, command) -> bool:
        if isinstance(command, p.Load) and "poison" in command.path:
            self.sent.append(command)
            self.kill()
            return True
        return super().send(command)


async def test_a_model_that_kills_the_engine_while_loading_is_not_fed_to_the_next_one(tmp_path):
    """If the engine dies loading the current model, the next engine loads the default model instead, and says so."""
    poison = tmp_path / "poison.safetensors"
    poison.write_bytes(_shipped().read_bytes())
    app = BreadthApp(engine_factory=PoisonEngine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.supervisor.ready, timeout=5, what="the engine")
        first = app.supervisor.engine
        await _submit(pilot, "ctrl+o", str(poison))
        await wait_for(pilot, lambda: app.supervisor.engine is not first, timeout=5, what="a new engine")
        assert app.current == DEFAULT_MODEL
        loads = [c.path for c in app.supervisor.engine.sent if isinstance(c, p.Load)]
        assert loads and not any("poison" in path for path in loads)
        assert any("not reloaded" in n.message for n in app._notifications)


LAST_WORDS = "import sys; sys.stderr.write({!r}); sys.exit(3)"


@pytest.mark.parametrize("words", ["", "this engine's own last words\n"])
def test_an_engines_last_words_are_its_own_not_an_earlier_engines(tmp_path, monkeypatch, words):
    """EngineGone quotes what this engine wrote to the shared log, never a line an earlier engine left there."""
    log = tmp_path / "engine.log"
    log.write_text("an earlier engine's last words\n")
    real = subprocess.Popen
    monkeypatch.setattr(
        engine_module.subprocess,
        "Popen",
        lambda cmd, **kw: real([sys.executable, "-c", LAST_WORDS.format(words)], **kw),
    )
    engine = EngineProcess(log)
    engine.start()
    with pytest.raises(EngineGone) as gone:
        engine.read()
    assert gone.value.exitcode == 3
    assert gone.value.last_words == words.strip()
