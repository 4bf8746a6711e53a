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


class InfeasibleStart(ClamberError):
    """A seeded trial's start stance cannot be placed (a hold out of the leg's reach): the
    trial is recorded as ``infeasible_start``, not raised to the study."""
