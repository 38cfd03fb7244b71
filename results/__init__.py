"""The results the README's numbers come from (grid.sqlite, the transfer matrix's runs), shipped with breadth so the
app's matrix view has rows before a user has stored a run of their own. Read through an immutable connection only."""
