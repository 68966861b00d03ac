"""The client's own version (PEP 440); the API version is ``arbiter_client.API_VERSION``."""

__version__ = "0.2.0"
