"""`breadth envs` ends its footer with the call forms --where form= takes, read from the registered forms."""

from __future__ import annotations

from breadth.core.cli.envs import either
from breadth.core.cli.main import main
from breadth.core.world.arithmetic.calculator import FORMS


def test_the_footer_lists_every_registered_form_at_80_columns(capsys, monkeypatch):
    """At 80 columns the footer's last words are `form= (infix or postfix)`, from FORMS, not a bare `form=`."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["envs"]) == 0
    footer = " ".join(capsys.readouterr().out.split()[-12:])
    assert list(FORMS)[:2] == ["infix", "postfix"]
    assert footer.endswith(f"form= ({either(FORMS)})") and "infix or postfix" in footer


def test_a_choice_of_names_reads_in_words():
    """One name alone, two joined by `or`, more by commas and a last `or`."""
    assert either(["infix"]) == "infix"
    assert either(["infix", "postfix"]) == "infix or postfix"
    assert either(["infix", "postfix", "prefix"]) == "infix, postfix or prefix"
