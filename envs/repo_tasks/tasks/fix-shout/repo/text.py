def shout(words):
    """words in capitals."""
    return words.lower()
