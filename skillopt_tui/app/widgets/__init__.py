"""One module per widget or dialog."""
