"""Errors shown to the user instead of a traceback (light: the CLI imports this on every command)."""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ConversationBusyError",
    "ConversationNotFoundError",
    "ConversationStateError",
    "ServiceUnavailableError",
    "UserFacingError",
]


class UserFacingError(Exception):
    """A problem to show the user (in Chinese) instead of a traceback; nothing was changed."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class ConversationNotFoundError(UserFacingError):
    """The conversation has no saved state (wrong id, or another user's)."""


class ConversationStateError(UserFacingError):
    """The request does not fit the conversation's state (nothing waiting, or an answer is missing)."""


class ServiceUnavailableError(UserFacingError):
    """A service (model, database, vector server) failed; progress is saved and `resume` continues."""


class ConversationBusyError(ConversationStateError):
    """Another turn of the conversation is running (in this or another process); nothing was done."""


class ConfigurationError(UserFacingError):
    """The service's own settings or files are wrong (a workflow template, a setting): the operator fixes them."""
