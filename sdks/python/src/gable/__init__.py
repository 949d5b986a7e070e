"""Gable's Python starter kit (standard library only). See README.md."""

from .client import API_VERSION, COLLECTIONS, LIVE, SANDBOX, Client, Collection, Payments
from .errors import (
    AuthenticationError,
    ConflictError,
    GableError,
    IdempotencyError,
    InvalidRequestError,
    NotFoundError,
    PermissionError,
    RateLimitError,
    ServerError,
)
from .webhooks import SignatureVerificationError, verify

__all__ = [
    "API_VERSION",
    "COLLECTIONS",
    "LIVE",
    "SANDBOX",
    "Client",
    "Collection",
    "Payments",
    "GableError",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionError",
    "NotFoundError",
    "ConflictError",
    "IdempotencyError",
    "RateLimitError",
    "ServerError",
    "SignatureVerificationError",
    "verify",
]
