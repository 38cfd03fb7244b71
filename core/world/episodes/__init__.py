"""Episodes: one episode with the calculator in the loop, batched rollouts, the verdict on an episode, and the
scores and rewards made from verdicts."""
