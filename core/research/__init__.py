"""The researcher's bench (issue 42): a card behind every run, runs compared item by item,
and a self-contained report. Everything here reads a finished run directory; nothing
here runs a model or changes a run."""
