"""The task world, without torch, in layers (each imports only those below it, checked by `lint-imports`):
text (the vocabulary, transcripts, worksheets, text shown safely), arithmetic (operations, the calculator,
problems, coordinates), episodes (an episode, rollouts, verdicts, scores), environments (the
registry of every environment, orders, mixes, probes), runs (settings, recipes, records, stats), and on top
gym_envs (every environment as a Gymnasium environment)."""
