"""Night: route mined tasks to instruction files, replay them, check and judge the replies,
gate candidates on held-out tasks and stage what passed.

Takes: `sleep.mine` tasks and the settings in `sleep.state`. Gives: staged commits in the
skills repository and `night.json`. The top of the chain: nothing in sleep/ imports it.
"""
