"""The training loop: trainer, one step, epoch review, finish, the gate and its schedule,
minibatches, the rollout runner and cache, resume checks and run setup."""
