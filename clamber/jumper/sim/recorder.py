"""The jump playback's log: the shared column-named :class:`~clamber.recorder.Recorder`."""

from clamber.recorder import Recorder

__all__ = ["Recorder"]
