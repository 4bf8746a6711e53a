"""clamber's exception tree: misuse raises one of these, solver failures are statuses."""


class ClamberError(Exception):
    """Base class of every error clamber raises on purpose."""


class ConfigError(ClamberError, ValueError):
    """User input (a morphology, a config file, a CLI option) is invalid.

    The message names the field, the value given and what is allowed.
    """


class FileFormatError(ClamberError, ValueError):
    """A file clamber reads is malformed, truncated or of an unknown version."""


class ExportError(ClamberError):
    """A reference for hardware violates a limit and was not written."""
