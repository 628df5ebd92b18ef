"""The one base class for errors a user can fix: the CLI prints them as one line, never a traceback."""


class UserError(ValueError):
    """Bad input or state the user can act on; the message names the input and what to do."""
