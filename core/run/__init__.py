"""Run files and events: the run directory, its state.json, summary, pre-run estimate, the
event stream, and the staging protocol with its run-directory implementation."""
