"""Sleep's state: the state directory, sleep.yaml settings, status, the cron schedule and
what became of staged branches. Every other room reads it; it reads no other room.

Takes: a state directory path. Gives: checked paths, settings, status records.
"""
