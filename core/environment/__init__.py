"""The environment contract the engine calls and envs/ implements: items, rollout results,
scores, split names, the environment protocol, the env error and the verdict vocabulary."""
