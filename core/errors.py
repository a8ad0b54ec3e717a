"""The root of every error a user can act on.

Faces print `str(error)` as one line and exit with `exit_code`; anything else is a bug and
keeps its traceback. Messages say what is wrong and what to do next.
"""


class UserError(Exception):
    exit_code = 2
