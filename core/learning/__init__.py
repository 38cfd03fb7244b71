"""The learning side, all torch: the model, the training loop, the greedy policy, evaluation and checkpoints."""
