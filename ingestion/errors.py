"""The one error a file that cannot be ingested raises."""


class DocumentLoadError(ValueError):
    """The file cannot be ingested; the message says why, in one line."""
