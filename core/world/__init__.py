"""The task world, without torch: vocabulary, transcripts, the calculator, episodes, families, mixes, probes and verdicts."""
