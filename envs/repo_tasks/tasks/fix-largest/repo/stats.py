def largest(values):
    """The largest of a non-empty list of numbers."""
    return min(values)
