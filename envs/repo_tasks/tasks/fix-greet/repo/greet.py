def greet(name):
    """A greeting for name."""
    return "Hello," + name
