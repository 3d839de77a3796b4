"""TODO(issue 18): the noise part of the Python API."""

__all__: list[str] = []
