"""Runs: how a run is made and recorded: settings (each declared once), recipes (the ways of learning), records
of what a run did and scored, and statistics over runs."""
