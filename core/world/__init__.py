"""The task world, without torch: vocabulary, transcripts, calculator, episodes, families, mixes, verdicts."""
